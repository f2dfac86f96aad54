import { formatLocalTime } from '../report/index.js';
import { type JobMarker, readMarkers, type StateStore } from './state-store.js';

/**
 * Jobs that did not finish in a previous run of the agent: a marker is left in running/ for every
 * job from its start, and removed only when it ends normally. On the next start each one is
 * reported (journal and jobs.jsonl), and a note is kept for its stick's usb.log, written when the
 * same stick (same label and same configuration hash) is next seen.
 */
export interface InterruptedJob {
  id: string;
  reason: string;
  where: string[];
  marker: JobMarker;
}

export function whereStopped(marker: JobMarker): string[] {
  const devices = Object.entries(marker.devices);
  if (devices.length === 0) return [`before any device was contacted (${marker.stage})`];
  return devices.map(
    ([name, progress]) => `${name}: ${progress.at}${progress.state === 'running' ? ' (not finished)' : ''}`,
  );
}

export function interruptionReason(marker: JobMarker): string {
  return marker.stoppedBy === undefined
    ? 'the agent stopped before the job finished (crash, kill or power loss)'
    : `the agent was stopped by ${marker.stoppedBy} during the job`;
}

export async function recoverInterruptedJobs(store: StateStore, now: Date = new Date()): Promise<InterruptedJob[]> {
  const found: InterruptedJob[] = [];
  for (const marker of await readMarkers(store.dir)) {
    const where = whereStopped(marker);
    const reason = interruptionReason(marker);
    await store.appendHistory({
      event: 'interrupted',
      id: marker.id,
      time: now.toISOString(),
      reason,
      where,
      source: marker.source,
    });
    if (marker.source.kind === 'stick') {
      const tag = `NOTE [${marker.id}]`;
      const text = [
        '',
        `${tag} this job on the stick, started ${formatLocalTime(new Date(marker.started))}, was interrupted: ${reason}.`,
        ...where.map((w) => `${tag} where it stopped: ${w}`),
        `${tag} a device may hold part of this configuration; running the stick again checks and finishes it.`,
        '',
      ].join('\n');
      await store.addNote({
        id: marker.id,
        kind: 'interrupted',
        created: now.toISOString(),
        label: marker.source.label,
        config_sha256: marker.source.config_sha256,
        text,
      });
    }
    await store.removeMarker(marker.id);
    found.push({ id: marker.id, reason, where, marker });
  }
  return found;
}
