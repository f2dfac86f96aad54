import { formatLocalTime } from '../report/index.js';
import { interruptionReason, whereStopped } from './interrupted-jobs.js';
import {
  type HistoryRecord,
  type JobMarker,
  type JobSourceRecord,
  readHistory,
  readMarkers,
  readNotes,
} from './state-store.js';
import { byCodeUnit } from '../core/index.js';
import { processAlive } from '../core/process-alive.js';

/** `mpprov status`: the recent jobs from the state dir, newest first, and the ones still running. */

interface JobStatus {
  id: string;
  started?: string;
  finished?: string;
  source?: JobSourceRecord;
  /** CHANGED, NO CHANGE, OK, FAILED; RUNNING; INTERRUPTED. */
  result: string;
  summary: string;
  log?: string;
  stickLog?: string;
}

export interface StatusReport {
  stateDir: string;
  running: JobStatus[];
  recent: JobStatus[];
  /** Jobs whose notes still wait for their stick's usb.log. */
  owedToSticks: string[];
}

export async function readStatus(stateDir: string, limit: number): Promise<StatusReport> {
  const history = await readHistory(stateDir);
  const markers = await readMarkers(stateDir);
  const live = new Map(markers.filter((m) => m.ended !== true && processAlive(m.pid)).map((m) => [m.id, m]));
  const jobs = new Map<string, JobStatus>();
  const job = (id: string): JobStatus => {
    let status = jobs.get(id);
    if (status === undefined) jobs.set(id, (status = { id, result: 'UNKNOWN', summary: '' }));
    return status;
  };
  for (const record of history) apply(job(record.id), record, live.get(record.id));
  for (const marker of markers) {
    if (jobs.has(marker.id)) continue;
    const status = job(marker.id);
    status.started = marker.started;
    status.source = marker.source;
    fromMarker(status, marker, live.has(marker.id));
  }
  const all = [...jobs.values()].sort((a, b) => byCodeUnit(b.started ?? b.id, a.started ?? a.id));
  return {
    stateDir,
    running: all.filter((j) => j.result === 'RUNNING'),
    recent: all.filter((j) => j.result !== 'RUNNING').slice(0, limit),
    owedToSticks: (await readNotes(stateDir)).map((n) => n.id),
  };
}

function apply(status: JobStatus, record: HistoryRecord, live: JobMarker | undefined): void {
  switch (record.event) {
    case 'start':
      status.started = record.time;
      status.source = record.source;
      if (live !== undefined) fromMarker(status, live, true);
      else if (status.result === 'UNKNOWN') {
        status.result = 'INTERRUPTED';
        status.summary = 'no end recorded: the agent stopped during the job, or is still running it';
      }
      return;
    case 'end':
      status.finished = record.time;
      status.result = record.result;
      status.summary = record.summary;
      status.log = record.log;
      status.stickLog = record.stick_log;
      return;
    case 'interrupted':
      status.source ??= record.source;
      if (status.result === 'UNKNOWN' || status.result === 'INTERRUPTED') {
        status.result = 'INTERRUPTED';
        status.summary = `${record.reason}; stopped at ${record.where.join('; ')}`;
      } else {
        status.summary += ` (interrupted: ${record.reason})`;
      }
      return;
  }
}

function fromMarker(status: JobStatus, marker: JobMarker, alive: boolean): void {
  if (alive) {
    status.result = 'RUNNING';
    status.summary = `${marker.stage}; ${whereStopped(marker).join('; ')}`;
  } else {
    status.result = 'INTERRUPTED';
    status.summary = `${interruptionReason(marker)}; stopped at ${whereStopped(marker).join('; ')}`;
  }
}

export function renderStatus(report: StatusReport): string {
  const lines: string[] = [`state directory: ${report.stateDir}`];
  const row = (j: JobStatus): string => {
    const when = j.started === undefined ? '' : formatLocalTime(new Date(j.started));
    const source = j.source === undefined ? '' : `${j.source.kind} ${j.source.label}`;
    const stick =
      j.stickLog !== undefined && j.stickLog !== 'complete' && j.stickLog !== 'none'
        ? `  (usb.log: ${j.stickLog})`
        : '';
    return `${j.id}  ${when}  ${source.padEnd(24)}  ${j.result.padEnd(11)}  ${j.summary}${stick}`;
  };
  lines.push('', report.running.length === 0 ? 'running: none' : 'running:');
  for (const j of report.running) lines.push(`  ${row(j)}`);
  lines.push('', report.recent.length === 0 ? 'recent jobs: none yet' : 'recent jobs (newest first):');
  for (const j of report.recent) lines.push(`  ${row(j)}`);
  if (report.owedToSticks.length > 0)
    lines.push('', `notes waiting for their stick's usb.log: ${report.owedToSticks.join(', ')}`);
  return `${lines.join('\n')}\n`;
}
