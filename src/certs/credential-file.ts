import { createHash } from 'node:crypto';
import { type KeyPath, formatKeyPath } from '../core/problem.js';
import type { Secret } from '../core/secret.js';

/** A file the configuration names, already read by the loader. */
export interface CredentialFile {
  /** The relative path exactly as written in the configuration: it is what messages show. */
  name: string;
  bytes: Uint8Array;
  /** The configuration key that named the file; problems about the file point there. */
  keyPath: KeyPath;
}

/** A key password from the configuration, with the key that gave it; its value never reaches a message. */
export interface SecretValue {
  value: Secret;
  keyPath: KeyPath;
}

export function sha256Hex(bytes: Uint8Array): string {
  return createHash('sha256').update(bytes).digest('hex');
}

/**
 * The key as a person reads it in messages: `private_key`, but `inner_tls.private_key` for the
 * PEAP inner set and `tls.ca` for the trust anchor, where the last name alone would be ambiguous.
 */
export function keyLabel(path: KeyPath): string {
  const parent = path.at(-2);
  return formatKeyPath(parent === 'inner_tls' || parent === 'tls' ? path.slice(-2) : path.slice(-1));
}

/** The key beside `path` in the same block: where `client_cert` would sit next to `private_key`. */
export function siblingPath(path: KeyPath, key: string): KeyPath {
  return [...path.slice(0, -1), key];
}
