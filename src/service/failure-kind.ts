import { ErrorCode, isMpprovError } from '../core/errors.js';
import { isServiceError } from './service-errors.js';

/**
 * What a failed request means for whoever waits on it: the credentials were refused (401), the
 * token may not do it (403), asking again may help (network, timeout, 5xx, an exhausted 429), or
 * it will not (404: a wrong service.url; 400, 406, a certificate that does not verify, a malformed
 * or oversized answer).
 */
export type FailureKind = 'bad-token' | 'no-permission' | 'passing' | 'lasting';

const PASSING: ReadonlySet<string> = new Set([
  ErrorCode.ServiceInternalError,
  ErrorCode.ServiceUnreachable,
  ErrorCode.ServiceTimeout,
  ErrorCode.ServiceRateLimited,
]);

const BAD_TOKEN: ReadonlySet<string> = new Set([
  ErrorCode.ServiceNoCredentials,
  ErrorCode.ServiceBadCredentials,
  ErrorCode.ServiceUndecodableCredentials,
]);

export function failureKind(error: unknown): FailureKind {
  const code = failureCode(error);
  if (BAD_TOKEN.has(code)) return 'bad-token';
  if (code === ErrorCode.ServiceForbidden) return 'no-permission';
  if (PASSING.has(code)) return 'passing';
  // Also a 502, 503 or 504 (a proxy or load balancer in front of the service); not a 405 or 409.
  if (isServiceError(error) && code === ErrorCode.ServiceHttp && (error.data.status ?? 0) >= 500) return 'passing';
  return 'lasting';
}

export function failureCode(error: unknown): ErrorCode {
  return isMpprovError(error) ? error.code : ErrorCode.Internal;
}

/** A failure's sentence; anything thrown that is not an Error (never expected) is named as such. */
export function failureText(failure: unknown): string {
  if (failure instanceof Error) return failure.message;
  return typeof failure === 'string' ? failure : 'an unexpected failure';
}

/** The HTTP status of a service's error answer, when the failure is one. */
export function failureStatus(error: unknown): number | undefined {
  return isServiceError(error) ? error.data.status : undefined;
}
