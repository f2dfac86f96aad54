import type { z } from 'zod';
import { ErrorCode } from '../core/errors.js';
import { Redactor } from '../core/redact.js';
import { parseWire, ShapeProblem } from '../admin-api/wire-shape.js';
import {
  oneLine,
  parseJson,
  ResponseError,
  successJson,
  type RawAnswer,
  type TransportErrorData,
} from '../http/index.js';
import { ErrorBody, errorMessages, ServiceMessage } from './data-api-model.js';
import { ServiceStatusError } from './service-errors.js';
import type { ServiceCredentials } from './service-settings.js';

/**
 * Reading one answer of the service: a 2xx body goes through the endpoint's zod schema; an error
 * status becomes the ServiceStatusError whose code the documented table gives.
 */

const STATUS_CODES: Partial<Record<number, ErrorCode>> = {
  400: ErrorCode.ServiceBadRequest,
  403: ErrorCode.ServiceForbidden,
  404: ErrorCode.ServiceNotFound,
  406: ErrorCode.ServiceNotAcceptable,
  500: ErrorCode.ServiceInternalError,
};

/** The three 401s differ only by their message: the documented wire protocol, not prose. */
const UNAUTHORIZED_CODES: Partial<Record<string, ErrorCode>> = {
  [ServiceMessage.NoCredentials]: ErrorCode.ServiceNoCredentials,
  [ServiceMessage.BadCredentials]: ErrorCode.ServiceBadCredentials,
  [ServiceMessage.UndecodableCredentials]: ErrorCode.ServiceUndecodableCredentials,
};

const MAX_SENTENCE = 300;

export function readAnswer<T extends z.ZodType>(
  raw: RawAnswer,
  schema: T,
  data: TransportErrorData,
  credentials: ServiceCredentials,
): z.infer<T> {
  if (raw.status >= 200 && raw.status < 300) {
    const json = successJson(raw, 'service', data, (text) => scrubCredentials(text, credentials));
    try {
      return parseWire(schema, json);
    } catch (error) {
      if (error instanceof ShapeProblem)
        throw new ResponseError(
          'service',
          { ...data, status: raw.status, problem: 'shape', detail: error.message },
          { cause: error },
        );
      throw error;
    }
  }
  throw statusError(raw, data, credentials);
}

/** An answer whose body is not read: nothing for a 2xx, the status's ServiceStatusError otherwise. */
export function readStatus(raw: RawAnswer, data: TransportErrorData, credentials: ServiceCredentials): void {
  if (raw.status >= 200 && raw.status < 300) return;
  throw statusError(raw, data, credentials);
}

/** The messages of an error answer in either shape (vendor `messages[]`, model `message`); none for other bodies. */
function messagesOf(raw: RawAnswer): string[] {
  const said = ErrorBody.safeParse(parseJson(raw.text));
  return said.success ? errorMessages(said.data) : [];
}

/** The service's words of an error answer, one line, bounded, with our own secret cut out. */
export function serviceMessageOf(raw: RawAnswer, credentials: ServiceCredentials): string | undefined {
  const messages = messagesOf(raw);
  if (messages.length === 0) return undefined;
  return oneLine(messages.join('; '), (text) => scrubCredentials(text, credentials), MAX_SENTENCE);
}

function statusError(raw: RawAnswer, data: TransportErrorData, credentials: ServiceCredentials): ServiceStatusError {
  const serviceMessage = serviceMessageOf(raw, credentials);
  const code =
    raw.status === 401
      ? // An undocumented 401 message still means the credentials were not accepted.
        (messagesOf(raw)
          .map((message) => UNAUTHORIZED_CODES[message.trim()])
          .find((known) => known !== undefined) ?? ErrorCode.ServiceBadCredentials)
      : (STATUS_CODES[raw.status] ?? ErrorCode.ServiceHttp);
  return new ServiceStatusError(code, {
    ...data,
    status: raw.status,
    serviceMessage,
    credentials: credentialsName(credentials),
  });
}

/** How messages name the credentials: never their value. */
function credentialsName(credentials: ServiceCredentials): string {
  return credentials.kind === 'token' ? 'the access token' : `the e-mail address and password of ${credentials.email}`;
}

/**
 * Cuts our own secret out of text the service sent back (an echo of the header, say), in the
 * forms it could come in. The report stage's redactor covers every output as well; this keeps
 * the error itself clean, whoever prints it.
 */
function scrubCredentials(text: string, credentials: ServiceCredentials): string {
  // The one redactor (core/redact.ts), with the Basic pair `email:password` as a secret of its own.
  const secrets =
    credentials.kind === 'token'
      ? [credentials.token]
      : [credentials.password, credentials.password.prefixed(`${credentials.email}:`)];
  return new Redactor(secrets).text(text);
}
