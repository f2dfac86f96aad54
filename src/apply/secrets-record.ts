import { randomBytes } from 'node:crypto';
import { join, resolve } from 'node:path';
import { type DeviceIdentity, deviceKeys, literalDeviceIdentity, resolveDeviceIdentity } from '../client/index.js';
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
 *
 * Entries are keyed by the device, not by how a stick spells its URL (client/device-identity.ts:
 * `https://ADDRESS[:PORT]` per resolved address), so `https://localhost:P` and
 * `https://127.0.0.1:P` share one entry and one stick's password change is seen by the other.
 * A device with several addresses has an entry under each, and a secret counts as known only when
 * every one of them holds it. An entry written before, under a URL as written (a host name, a
 * mapped IPv6 spelling), is found by resolving that URL when the record is opened; its hashes were
 * made over that URL, so each is checked over it and hashed again over the device key the first
 * time it matches. Two old entries that turn out to be one device cannot both be right: that
 * device's secrets all count as changed (sent again, the safe side).
 */

/** A device as the record knows it: resolved (what apply passes), or a URL taken as written (an IP literal, or a name by its spelling). */
export type RecordDevice = DeviceIdentity | string;

export interface SecretsRecord {
  /** The record's path. */
  readonly file: string;
  known(device: RecordDevice, stanzaKey: string, field: string, value: Secret): boolean;
  /** Whether the record holds any hash for this field (for every key of the device), matching or not. */
  recorded(device: RecordDevice, stanzaKey: string, field: string): boolean;
  remember(device: RecordDevice, stanzaKey: string, field: string, value: Secret): void;
  forget(device: RecordDevice, stanzaKey: string, field?: string): void;
  /** Writes this device's entries, merged over what other runs (other processes too) wrote meanwhile. */
  save(device: RecordDevice): Promise<void>;
  /** What a run on these devices should be told once, up front: an unreadable record, or entries made with another key. */
  warnings(devices: readonly RecordDevice[]): RecordWarning[];
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
  const own: DeviceEntries = {};
  const foreign = new Set<string>();
  if (read.kind === 'record') {
    for (const [url, entry] of Object.entries(read.devices)) {
      if (entry.keyId === undefined || entry.keyId === ownId) own[url] = entry;
      else foreign.add(url);
    }
  }
  const { entries: data, replaced } = await byDevice(own);
  const foreignKeys = new Set((await Promise.all([...foreign].map(keysOfStored))).flat());
  const unreadable = read.kind === 'unreadable' ? read.reason : undefined;
  // The same bytes as ever (url NUL stanza NUL field NUL value), so records written before still
  // match: an entry written by a device's address has always had its device key as its URL.
  const hash = (context: string, stanzaKey: string, field: string, value: Secret): string =>
    value.keyedHash(key, [context, stanzaKey, field]);
  const knownAt = (deviceKey: string, stanza: string, field: string, value: Secret): boolean => {
    const entry = data[deviceKey];
    const stored = entry?.stanzas[stanza]?.[field];
    if (entry === undefined || stored === undefined) return false;
    if (stored === hash(deviceKey, stanza, field, value)) return true;
    if (entry.context === deviceKey || stored !== hash(entry.context, stanza, field, value)) return false;
    // An entry from before, hashed over the URL as written: hashed again over the device key.
    (entry.stanzas[stanza] ??= {})[field] = hash(deviceKey, stanza, field, value);
    (entry.rehashed[stanza] ??= new Set()).add(field);
    return true;
  };

  return {
    file,
    known: (device, stanza, field, value) =>
      keysOf(device).every((deviceKey) => knownAt(deviceKey, stanza, field, value)),
    recorded: (device, stanza, field) =>
      keysOf(device).every((deviceKey) => data[deviceKey]?.stanzas[stanza]?.[field] !== undefined),
    remember(device, stanza, field, value) {
      for (const deviceKey of keysOf(device)) {
        const entry = (data[deviceKey] ??= freshEntry(deviceKey));
        (entry.stanzas[stanza] ??= {})[field] = hash(deviceKey, stanza, field, value);
        (entry.rehashed[stanza] ??= new Set()).add(field);
      }
    },
    forget(device, stanza, field) {
      for (const deviceKey of keysOf(device)) {
        const entry = data[deviceKey];
        if (entry === undefined) continue;
        if (field === undefined) delete entry.stanzas[stanza];
        else delete entry.stanzas[stanza]?.[field];
      }
    },
    save(device) {
      const deviceKeysOfIt = keysOf(device);
      // Serialised in this process; each save re-reads the file under its lock, so other devices' entries are kept.
      const queued = (saveQueues.get(file) ?? Promise.resolve()).then(async () => {
        try {
          await updateRecordFile(file, ownId, (devices) => {
            for (const deviceKey of deviceKeysOfIt) {
              const mine = data[deviceKey];
              // An old entry written by another spelling goes: this device's entry is under its key now.
              for (const url of replaced.get(deviceKey) ?? []) if (url !== deviceKey) delete devices[url];
              if (mine === undefined) delete devices[deviceKey];
              else devices[deviceKey] = { keyId: ownId, stanzas: hashedOverKey(mine) };
            }
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
    warnings(devices) {
      const out: RecordWarning[] = [];
      if (unreadable !== undefined) {
        const sentence = `the secrets record ${file} cannot be read: ${unreadable}; every secret counts as changed, and this run's are not recorded (fix or remove the file)`;
        out.push({ kind: 'unreadable', sentence });
      }
      if (devices.some((device) => keysOf(device).some((deviceKey) => foreignKeys.has(deviceKey)))) {
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

/**
 * One device's entry in memory: the hashes, and the URL they were made over (`context`: the device
 * key itself, or the URL as an entry from before wrote it). `rehashed`: the fields hashed over the
 * device key in this run; only those are saved from an entry from before, since the file holds one
 * URL per entry (a field not checked this run is sent again once, the safe side).
 */
interface MemoryEntry {
  context: string;
  stanzas: Record<string, Record<string, string>>;
  rehashed: Record<string, Set<string>>;
}

function freshEntry(deviceKey: string): MemoryEntry {
  return { context: deviceKey, stanzas: {}, rehashed: {} };
}

function hashedOverKey(entry: MemoryEntry): Record<string, Record<string, string>> {
  const out: Record<string, Record<string, string>> = {};
  for (const [stanza, fields] of Object.entries(entry.stanzas)) {
    const kept = Object.entries(fields).filter(([field]) => entry.rehashed[stanza]?.has(field) === true);
    if (kept.length > 0) out[stanza] = Object.fromEntries(kept);
  }
  return out;
}

function keysOf(device: RecordDevice): string[] {
  if (typeof device !== 'string') return deviceKeys(device);
  const literal = safeLiteral(device);
  return literal === undefined ? [device] : deviceKeys(literal);
}

/** The device keys of a URL in the file: an IP literal's at once, a host name's resolved as the connection would. */
async function keysOfStored(url: string): Promise<string[]> {
  const literal = safeLiteral(url);
  // A key that is no URL at all (a record edited by hand) is kept under itself.
  if (literal === undefined) return [url];
  return deviceKeys(literal.addresses.length > 0 ? literal : await resolveDeviceIdentity(url));
}

function safeLiteral(url: string): DeviceIdentity | undefined {
  try {
    return literalDeviceIdentity(url);
  } catch {
    return undefined;
  }
}

/**
 * The file's entries by device key. An entry already under its device key keeps it; one under a
 * URL as written is moved to its device's keys. When two entries land on one key, none is kept
 * there (which one is current cannot be told), and both old URLs go at the next save.
 */
async function byDevice(
  entries: DeviceEntries,
): Promise<{ entries: Record<string, MemoryEntry>; replaced: Map<string, string[]> }> {
  const placed = await Promise.all(
    Object.entries(entries).map(async ([url, entry]) => ({ url, entry, keys: await keysOfStored(url) })),
  );
  const sources = new Map<string, string[]>();
  for (const { url, keys } of placed) for (const k of keys) sources.set(k, [...(sources.get(k) ?? []), url]);
  const out: Record<string, MemoryEntry> = {};
  for (const { url, entry, keys } of placed) {
    for (const k of keys) {
      if ((sources.get(k) ?? []).length > 1) continue;
      const stanzas = structuredClone(entry.stanzas);
      const rehashed: Record<string, Set<string>> = {};
      // Under its own key: every hash is over the key already, and is saved as it is.
      if (url === k)
        for (const [stanza, fields] of Object.entries(stanzas)) rehashed[stanza] = new Set(Object.keys(fields));
      out[k] = { context: url, stanzas, rehashed };
    }
  }
  return { entries: out, replaced: sources };
}
