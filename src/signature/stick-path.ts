import { SIGNATURE_LIMITS } from './signature-files.js';

/**
 * A path inside a stick as mpprov.sha256 and the configuration write it: relative to the stick's
 * root, `/` between folders. Both sides go through this one function, so a file named `./a.pem`
 * in one and `a.pem` in the other is the same file, and nothing that could leave the stick (or
 * mean two things on two systems) is ever accepted.
 */

export type StickPathResult = { ok: true; path: string } | { ok: false; reason: string; hint: string };

const MAX_PATH_BYTES = SIGNATURE_LIMITS.pathBytes;

// C0 and C1 controls, DEL, and the bidirectional overrides that make a name display as another.
const UNSAFE_CHARACTERS = /[\p{Cc}\u200e\u200f\u202a-\u202e\u2066-\u2069]/u;

export function stickPath(raw: string): StickPathResult {
  if (raw === '') return refuse('the path is empty', "write the file's path relative to the stick's root");
  if (UNSAFE_CHARACTERS.test(raw))
    return refuse('the path holds control characters', 'rename the file to plain printable characters');
  if (Buffer.byteLength(raw, 'utf8') > MAX_PATH_BYTES)
    return refuse(`the path is longer than ${MAX_PATH_BYTES} bytes`, 'use a shorter name');
  if (raw.includes('\\'))
    return refuse(
      'the path holds a backslash',
      'separate folders with / (a FAT stick read on Linux does not treat \\ as one)',
    );
  if (raw.startsWith('/') || /^[A-Za-z]:/.test(raw))
    return refuse('the path is absolute', "write it relative to the stick's root");
  const segments: string[] = [];
  for (const segment of raw.split('/')) {
    if (segment === '..') return refuse("the path leaves the stick through '..'", 'list only files inside the stick');
    if (segment === '')
      return refuse(
        "the path has an empty folder name ('//' or a trailing /)",
        'write each folder once, with one / after it',
      );
    if (segment !== '.') segments.push(segment);
  }
  if (segments.length === 0) return refuse("the path names the stick's root, not a file", "write a file's path");
  return { ok: true, path: segments.join('/') };
}

function refuse(reason: string, hint: string): StickPathResult {
  return { ok: false, reason, hint };
}

/** How a path that passed `stickPath` is quoted in a sentence. */
export function quotePath(path: string): string {
  return `'${path}'`;
}

/** FAT (and exFAT) sticks do not tell `CA.pem` from `ca.pem`: two such names are one file there. */
export function foldCase(path: string): string {
  return path.toLowerCase();
}
