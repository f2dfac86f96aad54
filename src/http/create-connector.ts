import type { TLSSocket } from 'node:tls';
import { buildConnector } from '../core/undici.js';
import { normaliseFingerprint, sha256Fingerprint } from './fingerprint.js';
import { trustedCertificates } from './trusted-certificates.js';

/**
 * The undici connector for one peer, by trust kind:
 * - `ca`: Node's normal verification (chain and name) against the configured CA only.
 * - `fingerprint`: no chain verification (a device's certificate is self-issued), but once the TLS
 *   handshake is done and before undici writes a single request byte, the SHA-256 of the peer's
 *   leaf certificate must equal the pin; otherwise the socket is destroyed and the credentials
 *   never leave. (checkServerIdentity would not do: Node calls it only when the chain verified
 *   and the session is new, so for a self-issued certificate it never runs, and nothing pins.)
 * - `insecure`: no check at all.
 * - `public` (the monitoring service): TLS 1.2 or newer, chain and name always verified against
 *   the system store plus an extra CA when given; no pin and no "insecure" for a public service.
 * undici writes the request (and so the credentials) only after the handshake verified; a failed
 * one ends in a connect error. TLS session resumption is off: a resumed session would skip the
 * verification, or carry the old certificate across a device that regenerated its own.
 */

export type Connector = buildConnector.connector;

export type ConnectorTrust =
  | { kind: 'fingerprint'; sha256: string }
  | { kind: 'ca'; caPem: string }
  | { kind: 'insecure' }
  | { kind: 'public'; extraCaPem?: string | undefined };

/** The pin did not match; classifyFailure turns it into a PinMismatchError with the operation. */
export class PinMismatch extends Error {
  override readonly name = 'PinMismatch';

  constructor(
    readonly presented: string,
    readonly pinned: string,
  ) {
    super(`certificate fingerprint ${presented} is not the pinned ${pinned}`);
  }
}

/**
 * ERR_TLS_CERT_ALTNAME_INVALID, re-coded. undici 7 handles that one code apart from every other
 * connect error and leaves its queue counting a request that never runs: every later request on
 * the dispatcher then waits forever (even past its AbortSignal) and close() never resolves. Under
 * another code it takes the ordinary connect-error path.
 */
export class NameMismatch extends Error {
  override readonly name = 'NameMismatch';
  readonly code = 'MPPROV_TLS_CERT_NAME_MISMATCH';
  readonly tlsCode = 'ERR_TLS_CERT_ALTNAME_INVALID';
}

/** Errors raised while connecting: the request, and so the credentials, had not been sent. */
const connectPhaseErrors = new WeakSet<object>();

export function failedWhileConnecting(error: unknown): boolean {
  return typeof error === 'object' && error !== null && connectPhaseErrors.has(error);
}

export function createConnector(trust: ConnectorTrust, connectTimeoutMs: number): Connector {
  const common = { timeout: connectTimeoutMs, maxCachedSessions: 0 };
  switch (trust.kind) {
    case 'ca':
      return markConnectErrors(buildConnector({ ...common, ca: trust.caPem, rejectUnauthorized: true }));
    case 'insecure':
      return markConnectErrors(buildConnector({ ...common, rejectUnauthorized: false }));
    case 'fingerprint':
      return markConnectErrors(
        pinned(buildConnector({ ...common, rejectUnauthorized: false }), normaliseFingerprint(trust.sha256)),
      );
    case 'public': {
      const ca = trustedCertificates(trust.extraCaPem);
      return markConnectErrors(
        buildConnector({
          ...common,
          rejectUnauthorized: true,
          minVersion: 'TLSv1.2',
          ...(ca === undefined ? {} : { ca }),
        }),
      );
    }
  }
}

function pinned(connect: Connector, pin: string): Connector {
  return (options, callback) => {
    connect(options, (error, socket) => {
      if (error !== null) {
        callback(error, null);
        return;
      }
      const presented = peerFingerprint(socket as TLSSocket);
      if (presented !== pin) {
        socket.destroy();
        callback(new PinMismatch(presented, pin), null);
        return;
      }
      callback(null, socket);
    });
  };
}

function peerFingerprint(socket: TLSSocket): string {
  const certificate = socket.getPeerX509Certificate();
  return certificate === undefined ? '(no certificate)' : sha256Fingerprint(certificate.raw);
}

function markConnectErrors(connect: Connector): Connector {
  return (options, callback) => {
    try {
      connect(options, (error, socket) => {
        if (error !== null) {
          const recoded =
            (error as { code?: unknown }).code === 'ERR_TLS_CERT_ALTNAME_INVALID'
              ? new NameMismatch(error.message, { cause: error })
              : error;
          connectPhaseErrors.add(recoded);
          callback(recoded, null);
        } else callback(null, socket);
      });
    } catch (error) {
      // tls.connect throws synchronously on bad options (e.g. an unusable CA).
      if (typeof error === 'object' && error !== null) connectPhaseErrors.add(error);
      throw error;
    }
  };
}
