import { randomBytes } from 'node:crypto';
import { join, resolve } from 'node:path';
import type { Secret } from '../core/secret.js';
import { type DeviceEntries, readRecordFile, RecordUnreadableError, updateRecordFile } from './secrets-record-file.js';
import { KEY_BYTES, keyId, readOrCreateKey } from './secrets-record-key.js';

/**
 * Secrets cannot be read back from the device, so the agent keeps, per device and stanza, a keyed
 * hash (HMAC-SHA256 with a random key) of each secret it last applied. An unchanged password is
 * then not sent again; without a record it is. The record never holds a secret, nor the key: the
 * key is per installation, in its own 0600 file in the state directory (secrets-record.key), so a
 * copy of the record alone (a backup, a bug report, a record shared by several runners) cannot
 * confirm a guessed secret offline.
 *
 * The record lives in the state directory, or where --secrets-record / agent.yaml secrets_record
 * says (one record for a team's runners). Each device's entry names the key that hashed it (a
 * key id), so a record written with another installation's key is said once, plainly, instead of
 * every secret silently counting as changed; `mpprov secrets-record export/import` moves a key on
 * purpose. A record that cannot be read is a warning: every secret counts as changed, and the file
 * is never replaced (it may be someone else's, or a newer format).
 */

export interface SecretsRecord {
  /** The record's path. */
  readonly file: string;
  known(deviceUrl: string, stanzaKey: string, field: string, value: Secret): boolean;
  remember(deviceUrl: string, stanzaKey: string, field: string, value: Secret): void;
  forget(deviceUrl: string, stanzaKey: string, field?: string): void;
  /** Writes this device's entry, merged over what other runs (other processes too) wrote meanwhile. */
  save(deviceUrl: string): Promise<void>;
  /** What a run on these devices should be told once, up front: an unreadable record, or entries made with another key. */
  warnings(deviceUrls: readonly string[]): RecordWarning[];
  /** The sentence for a save that failed. */
  saveProblem(error: unknown): string;
}

/** `unreadable`: the record cannot be read (a caller that already said it cannot be written may leave this out). */
export interface RecordWarning {
  kind: 'unreadable' | 'other-key';
  sentence: string;
}

export interface SecretsRecordOptions {
  /** The record's path when it is not the state directory's (--secrets-record, agent.yaml secrets_record). */
  file?: string | undefined;
}

export const SECRETS_RECORD_FILE = 'secrets-record.json';
export { SECRETS_RECORD_KEY_FILE } from './secrets-record-key.js';

/** Where the record of a run is: the given file, else the state directory's. */
export function secretsRecordPath(stateDir: string, file?: string): string {
  return file === undefined ? join(stateDir, SECRETS_RECORD_FILE) : resolve(file);
}

/**
 * Saves to one record file are queued per process: the daemon runs several jobs at once, each
 * with its own SecretsRecord; other processes are kept apart by the file's lock. (Module state on
 * purpose: the file is one per process, not per caller.)
 */
const saveQueues = new Map<string, Promise<void>>();

export async function openSecretsRecord(stateDir: string, options: SecretsRecordOptions = {}): Promise<SecretsRecord> {
  const explicit = options.file !== undefined;
  const file = secretsRecordPath(stateDir, options.file);
  const read = await readRecordFile(file);
  const legacyKey = read.kind === 'record' ? read.legacyKey : undefined;
  let key: Buffer;
  try {
    // A first-format record's key moves to the key file (unless one is there already: then that one rules).
    key = await readOrCreateKey(stateDir, legacyKey?.length === KEY_BYTES ? legacyKey : undefined);
  } catch {
    // A state directory that cannot be written (or made) is no reason to stop provisioning: the
    // key then lasts this run only, the save fails later and is reported as a warning, and the
    // cost is secrets sent again next time (the safe side).
    key = legacyKey ?? randomBytes(KEY_BYTES);
  }
  const ownId = keyId(key);
  // Rewrite at once: the key of a first-format record must not stay beside the hashes until the next save.
  if (legacyKey !== undefined) await updateRecordFile(file, ownId, () => undefined).catch(() => undefined);

  // Entries made with another key can never match: they are left out (and named by warnings()),
  // so this run's save writes only hashes of its own key under its own key id.
  const data: DeviceEntries = {};
  const foreign = new Set<string>();
  if (read.kind === 'record') {
    for (const [url, entry] of Object.entries(read.devices)) {
      if (entry.keyId === undefined || entry.keyId === ownId) data[url] = { keyId: ownId, stanzas: entry.stanzas };
      else foreign.add(url);
    }
  }
  const unreadable = read.kind === 'unreadable' ? read.reason : undefined;
  // The same bytes as ever (url NUL stanza NUL field NUL value), so records written before still match.
  const hash = (deviceUrl: string, stanzaKey: string, field: string, value: Secret): string =>
    value.keyedHash(key, [deviceUrl, stanzaKey, field]);

  return {
    file,
    known: (url, stanza, field, value) => data[url]?.stanzas[stanza]?.[field] === hash(url, stanza, field, value),
    remember(url, stanza, field, value) {
      const device = (data[url] ??= { keyId: ownId, stanzas: {} });
      (device.stanzas[stanza] ??= {})[field] = hash(url, stanza, field, value);
    },
    forget(url, stanza, field) {
      const device = data[url];
      if (device === undefined) return;
      if (field === undefined) delete device.stanzas[stanza];
      else delete device.stanzas[stanza]?.[field];
    },
    save(url) {
      // Serialised in this process; each save re-reads the file under its lock, so other devices' entries are kept.
      const queued = (saveQueues.get(file) ?? Promise.resolve()).then(async () => {
        try {
          await updateRecordFile(file, ownId, (devices) => {
            const mine = data[url];
            if (mine === undefined) delete devices[url];
            else devices[url] = { keyId: ownId, stanzas: mine.stanzas };
          });
        } catch (error) {
          // Said once already, up front (warnings()): a record that still cannot be read is not said again per device.
          if (error instanceof RecordUnreadableError && unreadable !== undefined) return;
          throw error;
        }
      });
      // A failed save must not block the next one in the queue.
      saveQueues.set(
        file,
        queued.catch(() => undefined),
      );
      return queued;
    },
    warnings(urls) {
      const out: RecordWarning[] = [];
      if (unreadable !== undefined) {
        const sentence = `the secrets record ${file} cannot be read: ${unreadable}; every secret counts as changed, and this run's are not recorded (fix or remove the file)`;
        out.push({ kind: 'unreadable', sentence });
      }
      if (urls.some((url) => foreign.has(url))) {
        const sentence = `the secrets record ${file} was made with another key; every secret counts as changed (to share a record, import its key: mpprov secrets-record import --key-in FILE)`;
        out.push({ kind: 'other-key', sentence });
      }
      return out;
    },
    saveProblem(error) {
      if (error instanceof RecordUnreadableError)
        return `${error.message}, so it was not replaced; unchanged secrets will be sent again next time (fix or remove the file)`;
      const code = error instanceof Error && 'code' in error && typeof error.code === 'string' ? error.code : 'error';
      if (code === 'ELOCKED' && error instanceof Error)
        return `${error.message}; unchanged secrets will be sent again next time`;
      if (!explicit)
        return `the secrets record could not be saved in the state directory (${code}); unchanged secrets will be sent again next time (use --state-dir, or run as the service user)`;
      return `the secrets record ${file} could not be saved (${code}); unchanged secrets will be sent again next time (check --secrets-record, or secrets_record in agent.yaml)`;
    },
  };
}
