import { randomBytes } from 'node:crypto';
import { link, mkdir, readFile, rename, unlink, writeFile } from 'node:fs/promises';
import { dirname, join } from 'node:path';
import type { Secret } from '../core/secret.js';

/**
 * Secrets cannot be read back from the device, so the agent keeps, per device and stanza, a keyed
 * hash (HMAC-SHA256 with a random key) of each secret it last applied. An unchanged password is
 * then not sent again; without a record it is. The record is mode 0600 under the state directory
 * and never holds a secret itself, nor the key: the key lives in its own 0600 file beside it
 * (secrets-record.key), so a copy of the record alone (a backup, a bug report) cannot confirm a
 * guessed secret offline. A record of the first format (key inside) is migrated at opening: the
 * key moves to its file and the record is rewritten without it.
 */

type Hashes = Record<string, Record<string, Record<string, string>>>;

interface RecordFile {
  version: 2;
  devices: Hashes;
}

/** The first format, which kept the key beside the hashes; read only to migrate it. */
interface LegacyRecordFile {
  version: 1;
  key: string;
  devices: Hashes;
}

export interface SecretsRecord {
  known(deviceUrl: string, stanzaKey: string, field: string, value: Secret): boolean;
  remember(deviceUrl: string, stanzaKey: string, field: string, value: Secret): void;
  forget(deviceUrl: string, stanzaKey: string, field?: string): void;
  /** Writes this device's entries, merged over what other runs wrote meanwhile. */
  save(deviceUrl: string): Promise<void>;
}

export const SECRETS_RECORD_FILE = 'secrets-record.json';
export const SECRETS_RECORD_KEY_FILE = 'secrets-record.key';

/**
 * Saves to one record file are queued per process: the daemon runs several jobs at once, each
 * with its own SecretsRecord, and a save re-reads the file, so queued saves never drop each
 * other's devices. (Module state on purpose: the file is one per process, not per caller.)
 */
const saveQueues = new Map<string, Promise<void>>();

export async function openSecretsRecord(stateDir: string): Promise<SecretsRecord> {
  const file = join(stateDir, SECRETS_RECORD_FILE);
  const keyFile = join(stateDir, SECRETS_RECORD_KEY_FILE);
  const read = await readRecord(file);
  const legacyKey = read.legacyKey;
  let key: Buffer;
  try {
    if (legacyKey !== undefined) {
      key = await migrateKey(stateDir, keyFile, legacyKey);
      // Rewrite at once: the key must not stay beside the hashes until the next save.
      await writeRecord(stateDir, file, { version: 2, devices: read.record.devices });
    } else key = await readOrCreateKey(stateDir, keyFile);
  } catch {
    // A state directory that cannot be written (or made) is no reason to stop provisioning: the
    // key then lasts this run only, the save fails later and is reported as a warning, and the
    // cost is secrets sent again next time (the safe side).
    key = legacyKey !== undefined ? Buffer.from(legacyKey, 'base64') : randomBytes(32);
  }
  const data = read.record;
  // The same bytes as ever (url NUL stanza NUL field NUL value), so records written before still match.
  const hash = (deviceUrl: string, stanzaKey: string, field: string, value: Secret): string => value.keyedHash(key, [deviceUrl, stanzaKey, field]);

  return {
    known: (url, stanza, field, value) => data.devices[url]?.[stanza]?.[field] === hash(url, stanza, field, value),
    remember(url, stanza, field, value) {
      const device = (data.devices[url] ??= {});
      (device[stanza] ??= {})[field] = hash(url, stanza, field, value);
    },
    forget(url, stanza, field) {
      const device = data.devices[url];
      if (device === undefined) return;
      if (field === undefined) delete device[stanza];
      else delete device[stanza]?.[field];
    },
    save(url) {
      // Saves are serialised; each re-reads the file so parallel jobs of other devices are kept.
      const queued = (saveQueues.get(file) ?? Promise.resolve()).then(async () => {
        const onDisk = (await readRecord(file)).record;
        const mine = data.devices[url];
        if (mine === undefined) delete onDisk.devices[url];
        else onDisk.devices[url] = mine;
        await writeRecord(stateDir, file, onDisk);
        // Only this device's entry is written; the in-memory record keeps its own entries (other
        // devices may be remembered but not yet saved). A record another process created
        // meanwhile has its own key: our hashes then do not match later, and the secrets are
        // sent again (the safe side).
      });
      // A failed save must not block the next one in the queue.
      saveQueues.set(file, queued.catch(() => undefined));
      return queued;
    },
  };
}

/**
 * mkdir -p, one level at a time: Node's recursive mkdir never returns for a path under /proc
 * (seen on Node 20), and a state directory given by hand may be anything.
 */
async function ensureDirectory(dir: string): Promise<void> {
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

async function writeRecord(stateDir: string, file: string, record: RecordFile): Promise<void> {
  await ensureDirectory(stateDir);
  const tmp = `${file}.${process.pid}.${randomBytes(6).toString('hex')}.tmp`;
  await writeFile(tmp, `${JSON.stringify(record, null, 1)}\n`, { mode: 0o600 });
  await rename(tmp, file);
}

/** The record's hashes (without any key), and the key a first-format record still carried. */
async function readRecord(file: string): Promise<{ record: RecordFile; legacyKey?: string }> {
  try {
    const parsed = JSON.parse(await readFile(file, 'utf8')) as Partial<RecordFile> | Partial<LegacyRecordFile>;
    if (typeof parsed.devices === 'object' && parsed.devices !== null) {
      const record: RecordFile = { version: 2, devices: parsed.devices };
      if (parsed.version === 1 && typeof parsed.key === 'string') return { record, legacyKey: parsed.key };
      if (parsed.version === 2) return { record };
    }
  } catch {
    // missing or unreadable: start a new record (secrets are then simply sent again)
  }
  return { record: { version: 2, devices: {} } };
}

/**
 * The key file, created once: written to a temporary file and linked into place, so two jobs
 * opening the record at the same moment agree on one key and neither reads a half-written one.
 */
async function readOrCreateKey(stateDir: string, keyFile: string, proposed: string = randomBytes(32).toString('base64')): Promise<Buffer> {
  const existing = await readKey(keyFile);
  if (existing !== undefined) return existing;
  await ensureDirectory(stateDir);
  const tmp = `${keyFile}.${process.pid}.${randomBytes(6).toString('hex')}.tmp`;
  await writeFile(tmp, `${proposed}\n`, { mode: 0o600 });
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
  const fresh = randomBytes(32);
  await writeFile(tmp, `${fresh.toString('base64')}\n`, { mode: 0o600 });
  await rename(tmp, keyFile);
  return fresh;
}

/** A first-format record's key moves to the key file (unless one is there already: then that one rules). */
async function migrateKey(stateDir: string, keyFile: string, legacyKey: string): Promise<Buffer> {
  return readOrCreateKey(stateDir, keyFile, legacyKey);
}

async function readKey(keyFile: string): Promise<Buffer | undefined> {
  try {
    const text = (await readFile(keyFile, 'utf8')).trim();
    const key = Buffer.from(text, 'base64');
    return key.length >= 16 ? key : undefined;
  } catch {
    return undefined;
  }
}
