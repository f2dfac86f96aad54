import { createHash, randomBytes } from 'node:crypto';
import { link, mkdir, rename, unlink, writeFile } from 'node:fs/promises';
import { dirname, join } from 'node:path';
import { readCappedFile } from '../core/read-capped-file.js';

/**
 * The key that hashes secrets for the secrets record: 32 random bytes, per installation, in its
 * own 0600 file in the state directory (never in the record, never beside a shared record), so a
 * record alone, copied or shared, confirms no guessed secret. It leaves the installation only on
 * purpose (`mpprov secrets-record export`), so that several runners sharing one record hash alike.
 */

export const SECRETS_RECORD_KEY_FILE = 'secrets-record.key';
export const KEY_BYTES = 32;
/** The first line of an exported key: says what the file is, so an import refuses anything else. */
const EXPORT_TAG = 'mpprov-secrets-record-key 1';
/** A key file is one short line; anything larger is not one, and is not read whole. */
const KEY_FILE_CAP = 4096;

/**
 * A short, public name for a key: the first 16 hex digits of SHA-256 over a label and the key. It
 * tells "made with another key" apart from "changed" without revealing anything of a 256-bit
 * random key (and is never an HMAC of any secret).
 */
export function keyId(key: Uint8Array): string {
  return createHash('sha256').update('mpprov secrets-record key id\0').update(key).digest('hex').slice(0, 16);
}

export function keyFileOf(stateDir: string): string {
  return join(stateDir, SECRETS_RECORD_KEY_FILE);
}

/** The installation's key, or undefined when there is none yet (or the file is damaged). */
export async function readKey(keyFile: string): Promise<Buffer | undefined> {
  const text = await readSmallFile(keyFile);
  if (typeof text !== 'string') return undefined;
  const key = parseKeyText(text);
  return typeof key === 'string' ? undefined : key;
}

/**
 * The installation's key, created once: written to a temporary file and linked into place, so two
 * runs opening the record at the same moment agree on one key and neither reads a half-written one.
 * `proposed` is what a first-format record carried (its key moves here).
 */
export async function readOrCreateKey(stateDir: string, proposed: Buffer = randomBytes(KEY_BYTES)): Promise<Buffer> {
  const keyFile = keyFileOf(stateDir);
  const existing = await readKey(keyFile);
  if (existing !== undefined) return existing;
  await ensureDirectory(stateDir);
  const tmp = temporaryName(keyFile);
  await writeFile(tmp, `${proposed.toString('base64')}\n`, { mode: 0o600, flag: 'wx' });
  try {
    await link(tmp, keyFile);
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== 'EEXIST') throw error;
  } finally {
    await unlink(tmp).catch(() => undefined);
  }
  const key = await readKey(keyFile);
  if (key !== undefined) return key;
  // A damaged key file: replace it. Hashes made with the old key then no longer match, and the
  // secrets are simply sent again (the safe side).
  await writeKeyFile(stateDir, proposed);
  return proposed;
}

/** Replaces the installation's key file (temporary file, 0600, rename). */
export async function writeKeyFile(stateDir: string, key: Buffer): Promise<void> {
  await ensureDirectory(stateDir);
  const keyFile = keyFileOf(stateDir);
  const tmp = temporaryName(keyFile);
  await writeFile(tmp, `${key.toString('base64')}\n`, { mode: 0o600, flag: 'wx' });
  await rename(tmp, keyFile);
}

/** The text `export` writes: a tag line, then the key in base64. */
export function exportText(key: Buffer): string {
  return `${EXPORT_TAG}\n${key.toString('base64')}\n`;
}

/**
 * A key from a file's text: an exported key (tag line + base64), or a state directory's key file
 * copied by hand (base64 alone). Anything else is one sentence, which never quotes the text: it
 * may be someone's secret given by mistake.
 */
export function parseKeyText(text: string): Buffer | string {
  const lines = text.split(/\r?\n/).filter((line) => line.trim() !== '');
  const body = lines[0]?.trim() === EXPORT_TAG ? lines.slice(1) : lines;
  if (body.length !== 1 || body[0] === undefined)
    return `it is not an mpprov secrets-record key (expected the file \`mpprov secrets-record export\` writes)`;
  const text64 = body[0].trim();
  if (!/^[A-Za-z0-9+/]+={0,2}$/.test(text64))
    return 'it is not an mpprov secrets-record key (its key line is not base64)';
  const key = Buffer.from(text64, 'base64');
  if (key.length !== KEY_BYTES || key.toString('base64') !== text64)
    return `it is not an mpprov secrets-record key (a key is ${KEY_BYTES} bytes in base64)`;
  return key;
}

/**
 * A small file read without blocking or reading it whole (readCappedFile): a FIFO cannot hang us,
 * a regular file only, at most KEY_FILE_CAP bytes. Returns the text, or the reason as an errno-like code.
 */
export async function readSmallFile(file: string, cap = KEY_FILE_CAP): Promise<string | { code: string }> {
  const read = await readCappedFile(file, cap);
  if (read.ok) return read.bytes.toString('utf8');
  if (read.why === 'not-regular') return { code: 'not a regular file' };
  if (read.why === 'too-large') return { code: `larger than ${cap} bytes` };
  return { code: read.code ?? 'error' };
}

export function temporaryName(file: string): string {
  return `${file}.${process.pid}.${randomBytes(6).toString('hex')}.tmp`;
}

/**
 * mkdir -p, one level at a time: Node's recursive mkdir never returns for a path under /proc
 * (seen on Node 20), and a state directory given by hand may be anything.
 */
export async function ensureDirectory(dir: string): Promise<void> {
  try {
    await mkdir(dir, { mode: 0o700 });
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    if (code === 'EEXIST') return;
    if (code !== 'ENOENT' || dirname(dir) === dir) throw error;
    await ensureDirectory(dirname(dir));
    await mkdir(dir, { mode: 0o700 });
  }
}
