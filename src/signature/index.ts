// Signed sticks (docs/stick-format.md, "Signed sticks"): mpprov.sha256 + mpprov.sha256.sig, made and
// checked with the OpenSSH tools. Verification takes the bytes the caller already read.
export { signStick } from './sign-stick.js';
export {
  SignatureStatus,
  verifyStickSignature,
  type StickSignature,
  type StickSignatureInput,
} from './verify-stick-signature.js';
export { describeSignature, signatureProblems } from './signature-policy.js';
export { referencedFiles } from './referenced-files.js';
export { MANIFEST_NAME, SIGNATURE_NAME } from './signature-files.js';
export { formatPolicy, hasExpired, parseNotAfter, parsePolicy, POLICY_NAME, type NotAfter } from './stick-policy.js';
export { readSignatureFiles, type SignatureFileRead } from './read-signature-files.js';
export {
  bringsOwnCredentials,
  type SignaturePolicy,
  signatureVerdict,
  type SignatureVerdict,
} from './signature-verdict.js';
export { keyFingerprint } from './key-fingerprint.js';
