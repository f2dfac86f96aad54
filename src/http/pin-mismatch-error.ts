import { ErrorCode } from '../core/errors.js';
import { TransportError, type TransportErrorData } from './transport-error.js';

export interface PinMismatchErrorData extends TransportErrorData {
  /** Fingerprints as `AB:CD:...`. */
  presented: string;
  pinned: string;
}

/**
 * The peer's certificate is not the pinned one; the connection was closed before any request.
 * Only a device is pinned (the service, a public one, is trusted through CAs), hence the code.
 */
export class PinMismatchError extends TransportError<PinMismatchErrorData> {
  constructor(data: PinMismatchErrorData, options?: { cause?: unknown }) {
    super(
      'device',
      ErrorCode.DevicePinMismatch,
      `the device at ${data.url} presented a certificate with SHA-256 fingerprint ${data.presented}, ` +
        `but the configuration pins ${data.pinned}; no credentials were sent`,
      data,
      options,
    );
    this.name = 'PinMismatchError';
  }
}
