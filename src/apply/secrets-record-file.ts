import { constants } from 'node:fs';
import { chmod, open, rename, stat, unlink, writeFile } from 'node:fs/promises';
import { hostname } from 'node:os';
import { dirname } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { z } from 'zod';
import { ensureDirectory, keyId, temporaryName } from './secrets-record-key.js';

/**
 * The secrets record on disk, which may be shared by several runners (--secrets-record, agent.yaml
 * secrets_record): read without following a link, without blocking on a FIFO and never more than
 * RECORD_CAP bytes; checked with zod; written by temporary file and rename under a lock file, each
 * writer re-reading the record and replacing only its own devices, so concurrent runs on other
 * devices keep their entries.
 *
 * Format 3: `{"version": 3, "devices": {URL: {"key_id": ID, "stanzas": {STANZA: {FIELD: HMAC}}}}}`.
 * Each device's entry says which key hashed it (keyId: a truncated hash of the key, never the key),
 * so a record made with another installation's key is told apart from a changed secret.
 * Format 2 (no key ids; the record beside its key in the state directory) and format 1 (the key
 * inside) are read and written back as format 3.
 */

/** A record of 100 000 devices is a few tens of MiB; anything larger is not a record. */
const RECORD_CAP = 32 * 1024 * 1024;
/**
 * How long a writer waits for another's lock, and when a lock counts as left by a crash (a write
 * takes milliseconds): the wait outlasts a crash's lock, so a crash never costs a run its saves.
 */
const LOCK_WAIT_MS = 20_000;
const LOCK_STALE_MS = 10_000;

const Hash = z.string().regex(/^[0-9a-f]{64}$/);
const Stanzas = z.record(z.string(), z.record(z.string(), Hash));
const RecordV3 = z.strictObject({
  version: z.literal(3),
  devices: z.record(z.string(), z.strictObject({ key_id: z.string().regex(/^[0-9a-f]{16}$/), stanzas: Stanzas })),
});
const RecordV2 = z.object({ version: z.literal(2), devices: z.record(z.string(), Stanzas) });
const RecordV1 = z.object({ version: z.literal(1), key: z.string(), devices: z.record(z.string(), Stanzas) });
const AnyRecord = z.union([RecordV3, RecordV2, RecordV1]);

type StanzaHashes = z.infer<typeof Stanzas>;
/** One device's entry; keyId undefined: a format-2 record, made with the key of the state directory it lived in. */
interface DeviceEntry {
  keyId: string | undefined;
  stanzas: StanzaHashes;
}
export type DeviceEntries = Record<string, DeviceEntry>;

export type RecordRead =
  | { kind: 'missing' }
  | {
      kind: 'record';
      devices: DeviceEntries;
      /** Format 1 only: the key it carried, to move out. */ legacyKey?: Buffer;
      mode: number;
    }
  | { kind: 'unreadable'; /** Why, as the end of "the secrets record FILE cannot be read: ..." */ reason: string };

/** Reads the record; never throws, never blocks on a FIFO, never reads more than RECORD_CAP bytes. */
export async function readRecordFile(file: string): Promise<RecordRead> {
  let text: string;
  let mode: number;
  let handle;
  try {
    // O_NOFOLLOW: a link is refused, because the write (rename) would replace the link itself and
    // silently part the record from the file it pointed at.
    handle = await open(file, constants.O_RDONLY | constants.O_NONBLOCK | constants.O_NOFOLLOW);
    const info = await handle.stat();
    if (!info.isFile()) return { kind: 'unreadable', reason: `it is not a regular file (${fileType(info)})` };
    mode = info.mode & 0o666;
    if (info.size > RECORD_CAP)
      return { kind: 'unreadable', reason: `it is larger than ${RECORD_CAP / 1024 / 1024} MiB` };
    // Read in chunks with the cap held while reading (the size fstat gave may change meanwhile).
    const chunks: Buffer[] = [];
    let length = 0;
    for (;;) {
      const chunk = Buffer.alloc(64 * 1024);
      const { bytesRead } = await handle.read(chunk, 0, chunk.length, length);
      if (bytesRead === 0) break;
      length += bytesRead;
      if (length > RECORD_CAP)
        return { kind: 'unreadable', reason: `it is larger than ${RECORD_CAP / 1024 / 1024} MiB` };
      chunks.push(chunk.subarray(0, bytesRead));
    }
    text = Buffer.concat(chunks).toString('utf8');
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    if (code === 'ENOENT') return { kind: 'missing' };
    if (code === 'ELOOP')
      return { kind: 'unreadable', reason: 'it is a symbolic link (give the path of the file itself)' };
    return { kind: 'unreadable', reason: `${code ?? 'error'}` };
  } finally {
    await handle?.close().catch(() => undefined);
  }
  let json: unknown;
  try {
    json = JSON.parse(text);
  } catch {
    // The text is never quoted: a file given by mistake may be anything.
    return { kind: 'unreadable', reason: text.trim() === '' ? 'it is empty' : 'it is not JSON' };
  }
  const parsed = AnyRecord.safeParse(json);
  if (!parsed.success) {
    const version = typeof json === 'object' && json !== null && 'version' in json ? json.version : undefined;
    if (typeof version === 'number' && version > 3)
      return { kind: 'unreadable', reason: `it is of format ${version}, newer than this mpprov reads` };
    return { kind: 'unreadable', reason: 'it is not an mpprov secrets record (unexpected content)' };
  }
  const record = parsed.data;
  if (record.version === 3) {
    const devices: DeviceEntries = {};
    for (const [url, entry] of Object.entries(record.devices))
      devices[url] = { keyId: entry.key_id, stanzas: entry.stanzas };
    return { kind: 'record', devices, mode };
  }
  if (record.version === 2) return { kind: 'record', devices: entriesOf(record.devices, undefined), mode };
  const legacyKey = Buffer.from(record.key, 'base64');
  return { kind: 'record', devices: entriesOf(record.devices, keyId(legacyKey)), legacyKey, mode };
}

function entriesOf(devices: Record<string, StanzaHashes>, id: string | undefined): DeviceEntries {
  const out: DeviceEntries = {};
  for (const [url, stanzas] of Object.entries(devices)) out[url] = { keyId: id, stanzas };
  return out;
}

/** A save refused because the record on disk cannot be read: mpprov never replaces what it cannot read. */
export class RecordUnreadableError extends Error {
  readonly code = 'ERECORD';
  constructor(
    readonly file: string,
    readonly reason: string,
  ) {
    super(`the secrets record ${file} cannot be read: ${reason}`);
    this.name = 'RecordUnreadableError';
  }
}

/**
 * Under the lock: re-reads the record, lets `update` change it (this run's devices only), and
 * writes it back by temporary file and rename, keeping the mode the file had (a team may have made
 * a shared record group-writable; a new record is 0600). `ownKeyId` names format-2 entries as it
 * writes format 3. Throws RecordUnreadableError when the record on disk cannot be read.
 */
export async function updateRecordFile(
  file: string,
  ownKeyId: string,
  update: (devices: DeviceEntries) => void,
): Promise<void> {
  await ensureDirectory(dirname(file));
  await withLock(file, async () => {
    const read = await readRecordFile(file);
    if (read.kind === 'unreadable') throw new RecordUnreadableError(file, read.reason);
    const devices = read.kind === 'record' ? read.devices : {};
    update(devices);
    const out: z.infer<typeof RecordV3> = { version: 3, devices: {} };
    for (const [url, entry] of Object.entries(devices))
      out.devices[url] = { key_id: entry.keyId ?? ownKeyId, stanzas: entry.stanzas };
    const tmp = temporaryName(file);
    const mode = read.kind === 'record' ? read.mode || 0o600 : 0o600;
    try {
      await writeFile(tmp, `${JSON.stringify(out, null, 1)}\n`, { mode, flag: 'wx' });
      // The umask would take the group's write bit off a team's 0660 record: set the mode exactly.
      await chmod(tmp, mode);
      await rename(tmp, file);
    } catch (error) {
      await unlink(tmp).catch(() => undefined);
      throw error;
    }
  });
}

/**
 * A lock file beside the record (FILE.lock, created O_EXCL), held for the milliseconds of one
 * read-merge-write: other processes, on this machine or on another that shares the folder, wait.
 * A lock older than LOCK_STALE_MS was left by a crash and is removed. (Two waiters removing the
 * same stale lock at the same instant could both proceed; the cost is at worst one device's hashes
 * lost, i.e. its secrets sent once more: the safe side.)
 */
async function withLock(file: string, body: () => Promise<void>): Promise<void> {
  const lock = `${file}.lock`;
  const deadline = Date.now() + LOCK_WAIT_MS;
  for (;;) {
    try {
      await writeFile(lock, `${process.pid} ${hostname()}\n`, { mode: 0o600, flag: 'wx' });
      break;
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== 'EEXIST') throw error;
    }
    const info = await stat(lock).catch(() => undefined);
    if (info !== undefined && Date.now() - info.mtimeMs > LOCK_STALE_MS) {
      await unlink(lock).catch(() => undefined);
      continue;
    }
    if (Date.now() > deadline) {
      throw Object.assign(
        new Error(
          `the secrets record ${file} is locked: ${lock} has been there for ${LOCK_WAIT_MS / 1000} s (remove it if no mpprov is writing)`,
        ),
        { code: 'ELOCKED' },
      );
    }
    await sleep(10 + Math.floor(Math.random() * 30));
  }
  try {
    await body();
  } finally {
    await unlink(lock).catch(() => undefined);
  }
}

function fileType(info: {
  isDirectory(): boolean;
  isFIFO(): boolean;
  isSocket(): boolean;
  isCharacterDevice(): boolean;
  isBlockDevice(): boolean;
}): string {
  if (info.isDirectory()) return 'a directory';
  if (info.isFIFO()) return 'a FIFO';
  if (info.isSocket()) return 'a socket';
  if (info.isCharacterDevice() || info.isBlockDevice()) return 'a device';
  return 'not a file';
}
