import * as tls from 'node:tls';
import { buildConnector } from '../core/undici.js';

/**
 * The undici connector for the service: TLS 1.2 or newer, the certificate chain and name always
 * verified, against the system store plus `service.tls.ca` when given. undici writes the request
 * (and so the token) only after the handshake verified; a failed one ends in a connect error.
 * Unlike a Monitoring Point, the service has no pin and no "insecure": it is a public service.
 */

export type Connector = buildConnector.connector;

/**
 * ERR_TLS_CERT_ALTNAME_INVALID, re-coded: undici 7 handles that one connect error apart from the
 * others and leaves its queue waiting forever (see src/client/tls-connector.ts); under another
 * code it takes the ordinary connect-error path.
 */
export class ServiceNameMismatch extends Error {
  override readonly name = 'ServiceNameMismatch';
  readonly code = 'MPPROV_TLS_CERT_NAME_MISMATCH';
  readonly tlsCode = 'ERR_TLS_CERT_ALTNAME_INVALID';
}

const connectPhaseErrors = new WeakSet<object>();

/** Raised while connecting: the request, and so the token, had not been sent. */
export function failedWhileConnecting(error: unknown): boolean {
  return typeof error === 'object' && error !== null && connectPhaseErrors.has(error);
}

/**
 * The CAs to trust. Without an extra CA, Node's default store as it stands (its own roots, or the
 * OpenSSL system store when Node runs with --use-openssl-ca, plus NODE_EXTRA_CA_CERTS). With one,
 * `ca` replaces that store, so the store's certificates are listed too: from
 * tls.getCACertificates where Node has it (22.15+, which also reads the OS store), else Node's
 * bundled roots.
 */
export function trustedCertificates(extraCaPem: string | undefined): string[] | undefined {
  if (extraCaPem === undefined) return undefined;
  const getCACertificates = (tls as { getCACertificates?: (type: 'default' | 'system') => string[] }).getCACertificates;
  const store =
    getCACertificates === undefined
      ? [...tls.rootCertificates]
      : [...new Set([...getCACertificates('default'), ...getCACertificates('system')])];
  return [...store, extraCaPem];
}

export function createServiceConnector(extraCaPem: string | undefined, connectTimeoutMs: number): Connector {
  const ca = trustedCertificates(extraCaPem);
  const connect = buildConnector({
    timeout: connectTimeoutMs,
    // The service needs no resumption, and a resumed session would skip the verification.
    maxCachedSessions: 0,
    rejectUnauthorized: true,
    minVersion: 'TLSv1.2',
    ...(ca === undefined ? {} : { ca }),
  });
  return (options, callback) => {
    try {
      connect(options, (error, socket) => {
        if (error === null) {
          callback(null, socket);
          return;
        }
        const recoded =
          (error as { code?: unknown }).code === 'ERR_TLS_CERT_ALTNAME_INVALID'
            ? new ServiceNameMismatch(error.message, { cause: error })
            : error;
        connectPhaseErrors.add(recoded);
        callback(recoded, null);
      });
    } catch (error) {
      // tls.connect throws synchronously on bad options (an unusable CA).
      if (typeof error === 'object' && error !== null) connectPhaseErrors.add(error);
      throw error;
    }
  };
}
