/**
 * Why a certificate or key could not be read. Readers return this instead of throwing, so the
 * certs stage and the device simulator can both turn it into their own words.
 */
export const ReadFailure = {
  /** Not parseable: damaged, truncated, or not what it claims to be. */
  Unreadable: 'unreadable',
  /** Encrypted and no password was given. */
  NeedsPassword: 'needs-password',
  /** Encrypted and the given password does not decrypt it. */
  WrongPassword: 'wrong-password',
  /** Well-formed, but uses an algorithm or structure this build cannot read. */
  Unsupported: 'unsupported',
  /** A PFX that opened but carries no private key. */
  NoKey: 'no-key',
  /** Asks for more key-derivation iterations than mpprov runs; `iterations` says how many. */
  TooManyIterations: 'too-many-iterations',
} as const;
export type ReadFailure = (typeof ReadFailure)[keyof typeof ReadFailure];

/** `detail` is for logs and tests; it never holds a password or key material. */
export interface ReadError {
  error: ReadFailure;
  detail: string;
  /** With TooManyIterations: the count the file asks for. */
  iterations?: number;
}
export type CertReadError = ReadError;
export type KeyReadError = ReadError;

export function isReadError(value: unknown): value is ReadError {
  return typeof value === 'object' && value !== null && !Array.isArray(value) && 'error' in value && 'detail' in value;
}

export function readError(error: ReadFailure, detail: string): ReadError {
  return { error, detail };
}

/** A file whose key derivation would run `iterations` rounds, past the cap; refused before any runs. */
export function tooManyIterations(iterations: number): ReadError {
  return { error: ReadFailure.TooManyIterations, detail: `${iterations} key-derivation iterations`, iterations };
}

/** The message of a caught value, for `detail`; library messages carry no secrets we passed. */
export function messageOf(caught: unknown): string {
  return caught instanceof Error ? caught.message : String(caught);
}
