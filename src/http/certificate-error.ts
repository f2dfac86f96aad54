import { ErrorCode } from '../core/errors.js';
import { forPeer, TransportError, type Peer, type TransportErrorData } from './transport-error.js';

export const CertificateProblem = {
  /** Not issued by a trusted CA (self-signed, unknown issuer, bad signature). */
  Untrusted: 'untrusted',
  /** Issued by a trusted CA, but for another host name or address. */
  WrongName: 'wrong-name',
  /** Expired or not yet valid. */
  Validity: 'validity',
  /** The handshake itself failed (protocol, not TLS at all). */
  Handshake: 'handshake',
} as const;
export type CertificateProblem = (typeof CertificateProblem)[keyof typeof CertificateProblem];

export interface CertificateErrorData extends TransportErrorData {
  problem: CertificateProblem;
  /** Node's reason, e.g. "self-signed certificate". */
  reason: string;
  /** Node's or OpenSSL's code, e.g. DEPTH_ZERO_SELF_SIGNED_CERT. */
  tlsCode?: string | undefined;
}

/** The peer's certificate did not verify, or the handshake failed: nothing was sent. */
export class CertificateError extends TransportError<CertificateErrorData> {
  constructor(peer: Peer, data: CertificateErrorData, options?: { cause?: unknown }) {
    super(
      peer,
      forPeer(peer, ErrorCode.DeviceTls, ErrorCode.ServiceTls),
      forPeer(peer, deviceSentence(data), `${serviceSentence(data)}; no token was sent`),
      data,
      options,
    );
    this.name = 'CertificateError';
  }
}

/** A device is trusted through the one CA its configuration names. */
function deviceSentence(data: CertificateErrorData): string {
  switch (data.problem) {
    case CertificateProblem.Untrusted:
      return `the certificate of ${data.url} is not issued by the configured CA (${data.reason})`;
    case CertificateProblem.WrongName:
      return `the certificate of ${data.url} is issued by the configured CA but not for this address (${data.reason})`;
    case CertificateProblem.Validity:
      return `the certificate of ${data.url} is not valid at this time (${data.reason})`;
    case CertificateProblem.Handshake:
      return `the TLS handshake with ${data.url} failed (${data.reason})`;
  }
}

/** The service is trusted through the system store plus service.tls.ca. */
function serviceSentence(data: CertificateErrorData): string {
  switch (data.problem) {
    case CertificateProblem.Untrusted:
      return `the certificate of ${data.url} is not issued by a CA in the system store or service.tls.ca (${data.reason})`;
    case CertificateProblem.WrongName:
      return `the certificate of ${data.url} is not issued for this host name (${data.reason})`;
    case CertificateProblem.Validity:
      return `the certificate of ${data.url} is not valid at this time (${data.reason})`;
    case CertificateProblem.Handshake:
      return `the TLS handshake with ${data.url} failed (${data.reason}); the service must speak TLS 1.2 or newer`;
  }
}
