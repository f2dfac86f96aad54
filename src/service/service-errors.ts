import { ErrorCode } from '../core/errors.js';
import { describeOperation, serviceAt, statusSaid, TransportError, type TransportErrorData } from '../http/index.js';

/**
 * The error only the service's answers raise: what an error status means in the data API model.
 * The errors any exchange can end in (certificate, unreachable, timeout, malformed or oversized
 * answer, rate limit) are src/http's, with `peer: 'service'`. None holds the token, the password or
 * any header: callers put names of things in the data, never their values.
 */

/** Any error of talking to the service. */
export type ServiceError = TransportError & { readonly peer: 'service' };

export function isServiceError(value: unknown): value is ServiceError {
  return value instanceof TransportError && value.peer === 'service';
}

export interface ServiceOperation {
  /** GET reads; POST (a path's creation, an observer) and PUT (its targetLocation) write; DELETE clears observers. */
  method: 'GET' | 'POST' | 'PUT' | 'DELETE';
  /** Relative to the base URL, with the query: `/v3/appliance?hostname=mp1`. */
  path: string;
}

export interface ServiceStatusErrorData extends TransportErrorData {
  status: number;
  /** For 401: who was refused, `the access token` or `user@example.net` (never the secret). */
  credentials: string;
}

/**
 * The service answered with an error status. The code follows the documented table: the status,
 * and for 401 the message, which is the only thing that tells its three cases apart.
 */
export class ServiceStatusError extends TransportError<ServiceStatusErrorData> {
  constructor(code: ErrorCode, data: ServiceStatusErrorData, options?: { cause?: unknown }) {
    super('service', code, statusSentence(code, data), data, options);
    this.name = 'ServiceStatusError';
  }
}

function statusSentence(code: ErrorCode, data: ServiceStatusErrorData): string {
  const at = serviceAt(data);
  const op = describeOperation(data);
  const said = statusSaid(data);
  switch (code) {
    case ErrorCode.ServiceBadRequest:
      return `${at} refused ${op} as a bad request (${said})`;
    case ErrorCode.ServiceNoCredentials:
      return `${at} says no credentials reached it on ${op} (${said}); a proxy on the way may strip the Authorization header`;
    case ErrorCode.ServiceBadCredentials:
      return `${at} does not accept ${data.credentials} (${said}): it is wrong, expired or revoked`;
    case ErrorCode.ServiceUndecodableCredentials:
      return `${at} could not decode ${data.credentials} (${said})`;
    case ErrorCode.ServiceForbidden:
      return `${at} denies ${op} to ${data.credentials} (${said}): no permission for it`;
    case ErrorCode.ServiceNotFound:
      return `${at} has no endpoint ${op} (${said}); check that service.url ends with /api`;
    case ErrorCode.ServiceNotAcceptable:
      return `${at} refused the headers of ${op} (${said})`;
    case ErrorCode.ServiceInternalError:
      return `${at} failed internally on ${op} (${said}); retry later`;
    default:
      return `${at} answered ${op} with ${said}`;
  }
}
