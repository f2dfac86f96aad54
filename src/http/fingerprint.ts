import { createHash } from 'node:crypto';
import { ErrorCode, MpprovError } from '../core/errors.js';

/** SHA-256 of a DER certificate as `AB:CD:...` (upper case, colons), the form openssl prints. */
export function sha256Fingerprint(certDer: Uint8Array): string {
  return colonHex(createHash('sha256').update(certDer).digest('hex'));
}

const PLAIN = /^[0-9a-f]{64}$/i;
const COLONS = /^(?:[0-9a-f]{2}:){31}[0-9a-f]{2}$/i;

/**
 * Any accepted spelling of a SHA-256 fingerprint (64 hex digits, with or without colons between
 * the bytes, any case, optionally prefixed `sha256:` or `SHA256 Fingerprint=` as openssl prints
 * it) -> `AB:CD:...`. Anything else is a configuration error.
 */
export function normaliseFingerprint(text: string): string {
  const trimmed = text.trim().replace(/^(?:sha-?256(?:\s+fingerprint)?\s*[=:]\s*)/i, '');
  if (!PLAIN.test(trimmed) && !COLONS.test(trimmed)) {
    throw new MpprovError(
      ErrorCode.ConfigInvalid,
      `"${text}" is not a SHA-256 certificate fingerprint: expected 64 hex digits, with or without a colon between each pair`,
    );
  }
  return colonHex(trimmed.replaceAll(':', ''));
}

function colonHex(hex: string): string {
  return (hex.toUpperCase().match(/../g) ?? []).join(':');
}
