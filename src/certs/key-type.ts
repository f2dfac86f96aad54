import type { KeyObject } from 'node:crypto';

/** What the Monitoring Point's 802.1X supplicant accepts: RSA, and EC on the two NIST curves it ships. */
const SUPPORTED_CURVES: Record<string, string> = { prime256v1: 'P-256', secp384r1: 'P-384' };
const OTHER_CURVE_NAMES: Record<string, string> = { secp521r1: 'P-521', secp224r1: 'P-224' };
const TYPE_NAMES: Record<string, string> = {
  'rsa-pss': 'RSA-PSS',
  dsa: 'DSA',
  dh: 'DH',
  ed25519: 'Ed25519',
  ed448: 'Ed448',
  x25519: 'X25519',
  x448: 'X448',
};

export interface KeyType {
  supported: boolean;
  /** With its article, ready for a sentence: "an RSA key", "an EC key on curve P-521". */
  description: string;
}

/** Judges a private or public key; both halves of a pair give the same answer. */
export function keyTypeOf(key: KeyObject): KeyType {
  const type = key.asymmetricKeyType ?? 'unknown';
  if (type === 'rsa') return { supported: true, description: 'an RSA key' };
  if (type === 'ec') {
    const curve = key.asymmetricKeyDetails?.namedCurve ?? 'unknown';
    const supported = SUPPORTED_CURVES[curve];
    if (supported !== undefined) return { supported: true, description: `an EC key on curve ${supported}` };
    return { supported: false, description: `an EC key on curve ${OTHER_CURVE_NAMES[curve] ?? curve}` };
  }
  const name = TYPE_NAMES[type] ?? type;
  return { supported: false, description: `${article(name)} ${name} key` };
}

/** Acronyms are read letter by letter: "an RSA", "an Ed25519", "a DSA". */
function article(name: string): string {
  return /^[AEFHILMNORSX]/.test(name) ? 'an' : 'a';
}
