export {
  checkCredentialSet,
  checkTrustAnchor,
  type CheckOptions,
  type CredentialCheck,
  type CredentialFile,
  type CredentialSet,
  type SecretValue,
} from './check-credentials.js';
export { CredentialKind, derTruncation, detectCredentialKind, isCertificateKind, isPrivateKeyKind } from './detect.js';
export { keyTypeOf, type KeyType } from './key-type.js';
export { readCertificates } from './read-certificates.js';
export { type CertReadError, type KeyReadError, type ReadError, ReadFailure, isReadError } from './read-error.js';
export type { KeyContents } from './read-pfx.js';
export { readPrivateKey } from './read-private-key.js';
export { validateStick, type CredentialFacts, type ValidatedStick } from './validate-stick.js';
