export { checkCredentialSet, checkTrustAnchor, type CredentialFile, type CredentialSet } from './check-credentials.js';
export { credentialIdentity, type CredentialIdentity } from './credential-identity.js';
export { CredentialKind, derTruncation, detectCredentialKind } from './detect.js';
export { readCertificates } from './read-certificates.js';
export { ReadFailure, isReadError } from './read-error.js';
export { readPrivateKey } from './read-private-key.js';
export { validateStick, type ValidatedStick } from './validate-stick.js';
