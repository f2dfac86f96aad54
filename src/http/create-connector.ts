import { createSecureContext, type SecureContext, type SecureContextOptions, type TLSSocket } from 'node:tls';
import { buildConnector } from '../core/undici.js';
import { withLlhttpAtBaseline } from '../core/v8-flags.js';
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

/** Records `error` as raised while connecting (a knock's refusal, refused-connect.ts); returns it. */
export function raisedWhileConnecting<T extends object>(error: T): T {
  connectPhaseErrors.add(error);
  return error;
}

export function createConnector(trust: ConnectorTrust, connectTimeoutMs: number): Connector {
  return connectorsFor(trust)(connectTimeoutMs);
}

/**
 * Connectors for one peer, any deadline, over one TLS context. tls.connect makes a context of its
 * own for every connection it is handed the trust options for: the CA parsed again, for every
 * probe of a restart wait too (about 30 in a 3 s outage, refused connects included). One context
 * holds the same trust; each connection still verifies the peer's chain and name against it.
 * Built at the first connect, where building it failed before (an unusable CA is a connect error).
 */
export function connectorsFor(trust: ConnectorTrust): (connectTimeoutMs: number) => Connector {
  let context: SecureContext | undefined;
  const shared = (): SecureContext => (context ??= createSecureContext(contextOptions(trust)));
  return (connectTimeoutMs) => {
    const common = { timeout: connectTimeoutMs, maxCachedSessions: 0 };
    let connect: Connector | undefined;
    const once =
      (build: () => Connector): Connector =>
      (options, callback) =>
        (connect ??= build())(options, callback);
    switch (trust.kind) {
      case 'ca':
      case 'public':
        return markConnectErrors(
          once(() => buildConnector({ ...common, secureContext: shared(), rejectUnauthorized: true })),
        );
      case 'insecure':
        return markConnectErrors(
          once(() => buildConnector({ ...common, secureContext: shared(), rejectUnauthorized: false })),
        );
      case 'fingerprint':
        return markConnectErrors(
          pinned(
            once(() => buildConnector({ ...common, secureContext: shared(), rejectUnauthorized: false })),
            normaliseFingerprint(trust.sha256),
          ),
        );
    }
  };
}

/** What the context trusts: the configured CA only, the system store (and an extra CA), or Node's default. */
function contextOptions(trust: ConnectorTrust): SecureContextOptions {
  switch (trust.kind) {
    case 'ca':
      return { ca: trust.caPem };
    case 'insecure':
    case 'fingerprint':
      return {};
    case 'public': {
      const ca = trustedCertificates(trust.extraCaPem);
      return { minVersion: 'TLSv1.2', ...(ca === undefined ? {} : { ca }) };
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
        } else withLlhttpAtBaseline(() => callback(null, socket));
      });
    } catch (error) {
      // tls.connect throws synchronously on bad options (e.g. an unusable CA).
      if (typeof error === 'object' && error !== null) connectPhaseErrors.add(error);
      throw error;
    }
  };
}
