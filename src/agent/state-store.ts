import { renameSync, writeFileSync } from 'node:fs';
import { appendFile, readdir, readFile, rename, rm, stat, unlink, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { makeFolder } from '../core/make-folder.js';
import type { Redactor } from '../core/redact.js';

/**
 * The agent's state directory (default /var/lib/mpprov), which survives restarts:
 *   jobs.jsonl            history, one JSON object per job start, end, or interruption
 *   logs/<job id>.log     each job's full log, whatever happened to the stick
 *   running/<job id>.json a marker per running job: found on the next start after a crash/SIGTERM
 *   notes/<job id>.json   text owed to a stick's usb.log (interruptions, a log cut off by a pull)
 *   jobs/<job id>/stick/  the stick's copy while its job runs (removed after: it holds secrets)
 *   secrets-record.json   written by the apply stage (unless agent.yaml secrets_record puts it elsewhere)
 *   secrets-record.key    the key that hashes it: always here, never beside a record kept elsewhere
 * Every file is 0600 in 0700 folders, and every record passes the agent's redactor as it is written.
 */

export interface JobSourceRecord {
  kind: 'stick' | 'profile';
  label: string;
  location: string;
  config: string;
  config_sha256: string;
}

interface DeviceProgress {
  url?: string;
  /** What the device was doing last, e.g. `step 3/4 restart networking`. */
  at: string;
  state: 'running' | 'done' | 'failed';
}

export interface JobMarker {
  id: string;
  started: string;
  pid: number;
  source: JobSourceRecord;
  /** `reading the stick`, `validating`, `waiting for a device`, `applying`, `finishing`. */
  stage: string;
  devices: Record<string, DeviceProgress>;
  /** Set when a signal stopped the job (the job may still have ended cleanly). */
  stoppedBy?: string;
  /** True once the job's end record is in jobs.jsonl. */
  ended?: boolean;
}

export interface PendingNote {
  id: string;
  /** `interrupted`: the job stopped half-way (its device may hold pending changes); `unwritten`: only its log is owed. */
  kind: 'interrupted' | 'unwritten';
  created: string;
  label: string;
  config_sha256: string;
  /** Ready-made usb.log text. */
  text: string;
}

interface DeviceSummary {
  name: string;
  url: string;
  outcome: string;
  code?: string;
}

export type HistoryRecord =
  | { event: 'start'; id: string; time: string; source: JobSourceRecord }
  | {
      event: 'end';
      id: string;
      time: string;
      result: string;
      summary: string;
      outcome: string;
      stopped: boolean;
      devices: DeviceSummary[];
      log: string;
      /** `complete`, or why usb.log is incomplete: removed, read-only, full, failed; `none` for profiles. */
      stick_log: string;
    }
  | { event: 'interrupted'; id: string; time: string; reason: string; where: string[]; source: JobSourceRecord };

export const STATE_FILES = {
  history: 'jobs.jsonl',
  logs: 'logs',
  running: 'running',
  notes: 'notes',
  jobs: 'jobs',
} as const;

const MAX_HISTORY_BYTES = 4 * 1024 * 1024;
const KEEP_LOGS = 500;
const KEEP_NOTES = 50;
const MAX_NOTE_BYTES = 256 * 1024;

export interface StateStore {
  readonly dir: string;
  jobDir(id: string): string;
  logFile(id: string): string;
  appendHistory(record: HistoryRecord): Promise<void>;
  /**
   * Saves a running job's marker at once (synchronously: a few hundred bytes on the local disk),
   * so what it says is on disk before the engine sends the request it describes.
   */
  writeMarker(marker: JobMarker): void;
  removeMarker(id: string): Promise<void>;
  addNote(note: PendingNote): Promise<void>;
  notesFor(label: string, configSha256: string): Promise<PendingNote[]>;
  removeNotes(ids: readonly string[]): Promise<void>;
  removeJobDir(id: string): Promise<void>;
}

async function writeJson(file: string, text: string): Promise<void> {
  const tmp = `${file}.${process.pid}.tmp`;
  await writeFile(tmp, text, { mode: 0o600 });
  await rename(tmp, file);
}

async function readJsonFiles<T>(dir: string): Promise<T[]> {
  let names: string[];
  try {
    names = (await readdir(dir)).filter((n) => n.endsWith('.json')).sort();
  } catch {
    return [];
  }
  const out: T[] = [];
  for (const name of names) {
    try {
      out.push(JSON.parse(await readFile(join(dir, name), 'utf8')) as T);
    } catch {
      // half-written or foreign: skip it
    }
  }
  return out;
}

/**
 * Creates the folders and tidies what a previous run left: old snapshots, a long history, old logs.
 * `redactor` is the agent's, knowing agent.yaml's and the running jobs' secrets.
 */
export async function openStateStore(dir: string, redactor: Redactor): Promise<StateStore> {
  for (const sub of ['', STATE_FILES.logs, STATE_FILES.running, STATE_FILES.notes, STATE_FILES.jobs]) {
    await makeFolder(join(dir, sub), 0o700);
  }
  // Snapshots of a crashed run hold the sticks' secrets: never keep them.
  for (const name of await readdir(join(dir, STATE_FILES.jobs)))
    await rm(join(dir, STATE_FILES.jobs, name), { recursive: true, force: true });
  await trimHistory(join(dir, STATE_FILES.history));
  await pruneFolder(join(dir, STATE_FILES.logs), KEEP_LOGS);
  await pruneFolder(join(dir, STATE_FILES.notes), KEEP_NOTES);

  const historyFile = join(dir, STATE_FILES.history);
  let history: Promise<void> = Promise.resolve();

  return {
    dir,
    jobDir: (id) => join(dir, STATE_FILES.jobs, id),
    logFile: (id) => join(dir, STATE_FILES.logs, `${id}.log`),
    appendHistory(record) {
      // Redacted now, while the job's secrets are still known; written in turn.
      const line = `${redactor.json(record)}\n`;
      history = history.then(() => appendFile(historyFile, line, { mode: 0o600 })).catch(() => undefined);
      return history;
    },
    writeMarker(marker) {
      const file = join(dir, STATE_FILES.running, `${marker.id}.json`);
      try {
        writeFileSync(`${file}.tmp`, `${redactor.json(marker, 1)}\n`, { mode: 0o600 });
        renameSync(`${file}.tmp`, file);
      } catch {
        // a full or broken state dir must not stop the job; the job log still has every step
      }
    },
    async removeMarker(id) {
      await unlink(join(dir, STATE_FILES.running, `${id}.json`)).catch(() => undefined);
    },
    async addNote(note) {
      const text =
        note.text.length > MAX_NOTE_BYTES
          ? `${note.text.slice(0, MAX_NOTE_BYTES)}\n(... cut: the full log is on the laptop)\n`
          : note.text;
      await writeJson(join(dir, STATE_FILES.notes, `${note.id}.json`), `${redactor.json({ ...note, text }, 1)}\n`);
    },
    async notesFor(label, configSha256) {
      const notes = await readJsonFiles<PendingNote>(join(dir, STATE_FILES.notes));
      // Label AND configuration: anyone can give a stick the same label, and a note may tell what
      // happened to a device; a stick with the same label but another configuration gets nothing
      // (nor uses the note up). A stick whose configuration was edited since loses the note.
      return notes.filter((n) => n.label === label && configSha256 !== '' && n.config_sha256 === configSha256);
    },
    async removeNotes(ids) {
      for (const id of ids) await unlink(join(dir, STATE_FILES.notes, `${id}.json`)).catch(() => undefined);
    },
    removeJobDir: (id) => rm(join(dir, STATE_FILES.jobs, id), { recursive: true, force: true }),
  };
}

export function readMarkers(dir: string): Promise<JobMarker[]> {
  return readJsonFiles<JobMarker>(join(dir, STATE_FILES.running));
}

export function readNotes(dir: string): Promise<PendingNote[]> {
  return readJsonFiles<PendingNote>(join(dir, STATE_FILES.notes));
}

export async function readHistory(dir: string): Promise<HistoryRecord[]> {
  let text: string;
  try {
    text = await readFile(join(dir, STATE_FILES.history), 'utf8');
  } catch {
    return [];
  }
  const out: HistoryRecord[] = [];
  for (const line of text.split('\n')) {
    if (line.trim() === '') continue;
    try {
      out.push(JSON.parse(line) as HistoryRecord);
    } catch {
      // a line cut by a crash: skip it
    }
  }
  return out;
}

async function trimHistory(file: string): Promise<void> {
  try {
    if ((await stat(file)).size <= MAX_HISTORY_BYTES) return;
    const text = await readFile(file, 'utf8');
    const keep = text.slice(text.length - MAX_HISTORY_BYTES / 2);
    await writeFile(`${file}.tmp`, keep.slice(keep.indexOf('\n') + 1), { mode: 0o600 });
    await rename(`${file}.tmp`, file);
  } catch {
    // no history yet
  }
}

async function pruneFolder(dir: string, keep: number): Promise<void> {
  const names = (await readdir(dir)).sort();
  for (const name of names.slice(0, Math.max(0, names.length - keep)))
    await unlink(join(dir, name)).catch(() => undefined);
}
