import { randomBytes } from 'node:crypto';
import { mkdir, readFile, rename, writeFile } from 'node:fs/promises';
import { dirname, join } from 'node:path';
import type { Secret } from '../core/secret.js';

/**
 * Secrets cannot be read back from the device, so the agent keeps, per device and stanza, a keyed
 * hash (HMAC-SHA256 with a random key of this record) of each secret it last applied. An unchanged
 * password is then not sent again; without a record it is. The file is mode 0600 under the state
 * directory and never holds a secret itself.
 */

interface RecordFile {
  version: 1;
  key: string;
  devices: Record<string, Record<string, Record<string, string>>>;
}

export interface SecretsRecord {
  known(deviceUrl: string, stanzaKey: string, field: string, value: Secret): boolean;
  remember(deviceUrl: string, stanzaKey: string, field: string, value: Secret): void;
  forget(deviceUrl: string, stanzaKey: string, field?: string): void;
  /** Writes this device's entries, merged over what other runs wrote meanwhile. */
  save(deviceUrl: string): Promise<void>;
}

export const SECRETS_RECORD_FILE = 'secrets-record.json';

/**
 * Saves to one record file are queued per process: the daemon runs several jobs at once, each
 * with its own SecretsRecord, and a save re-reads the file, so queued saves never drop each
 * other's devices. (Module state on purpose: the file is one per process, not per caller.)
 */
const saveQueues = new Map<string, Promise<void>>();

export async function openSecretsRecord(stateDir: string): Promise<SecretsRecord> {
  const file = join(stateDir, SECRETS_RECORD_FILE);
  const data = await readRecord(file);
  const key = Buffer.from(data.key, 'base64');
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
        const onDisk = await readRecord(file, data.key);
        const mine = data.devices[url];
        if (mine === undefined) delete onDisk.devices[url];
        else onDisk.devices[url] = mine;
        await ensureDirectory(stateDir);
        const tmp = `${file}.${process.pid}.${randomBytes(6).toString('hex')}.tmp`;
        await writeFile(tmp, `${JSON.stringify(onDisk, null, 1)}\n`, { mode: 0o600 });
        await rename(tmp, file);
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

async function readRecord(file: string, fallbackKey?: string): Promise<RecordFile> {
  try {
    const parsed = JSON.parse(await readFile(file, 'utf8')) as Partial<RecordFile>;
    if (parsed.version === 1 && typeof parsed.key === 'string' && typeof parsed.devices === 'object' && parsed.devices !== null) {
      return parsed as RecordFile;
    }
  } catch {
    // missing or unreadable: start a new record (secrets are then simply sent again)
  }
  return { version: 1, key: fallbackKey ?? randomBytes(32).toString('base64'), devices: {} };
}
