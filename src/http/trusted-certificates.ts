import * as tls from 'node:tls';

/**
 * The CAs to trust for a public peer. Without an extra CA, Node's default store as it stands (its
 * own roots, or the OpenSSL system store when Node runs with --use-openssl-ca, plus
 * NODE_EXTRA_CA_CERTS). With one, `ca` replaces that store, so the store's certificates are listed
 * too: from tls.getCACertificates where Node has it (22.15+, which also reads the OS store), else
 * Node's bundled roots.
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
