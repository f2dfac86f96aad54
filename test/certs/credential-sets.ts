import type { CredentialFile, CredentialSet } from '../../src/certs/index.js';
import { Secret } from '../../src/core/index.js';
import type { KeyPath } from '../../src/core/problem.js';
import type { TestPki } from '../support/test-pki.js';

export const DOT1X: KeyPath = ['monitoring_points', 0, 'interfaces', 'eth0', 'dot1x'];
export const INNER: KeyPath = [...DOT1X, 'inner_tls'];
export const at = (key: string, base: KeyPath = DOT1X): KeyPath => [...base, key];

/** A file as the loader hands it over: named as written in the configuration, under certs/. */
export function credentialFile(pki: TestPki, name: string, key: string, base: KeyPath = DOT1X): CredentialFile {
  return { name: `certs/${name}`, bytes: pki.read(name), keyPath: at(key, base) };
}

/** A credential set from file names in the PKI directory; undefined leaves a slot out. */
export function credentialSet(
  pki: TestPki,
  files: { ca?: string; cert?: string; key?: string; password?: string },
  base: KeyPath = DOT1X,
): CredentialSet {
  const result: CredentialSet = {};
  if (files.ca !== undefined) result.caCert = credentialFile(pki, files.ca, 'ca_cert', base);
  if (files.cert !== undefined) result.clientCert = credentialFile(pki, files.cert, 'client_cert', base);
  if (files.key !== undefined) result.privateKey = credentialFile(pki, files.key, 'private_key', base);
  if (files.password !== undefined)
    result.privateKeyPassword = { value: new Secret(files.password), keyPath: at('private_key_password', base) };
  return result;
}
