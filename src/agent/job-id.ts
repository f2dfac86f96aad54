import { randomBytes } from 'node:crypto';

/** `j20261122-124800-3fa9`: UTC date and time of the start, and 16 random bits. Sorts by time. */
export function newJobId(now: Date = new Date(), random: () => string = () => randomBytes(2).toString('hex')): string {
  const iso = now.toISOString(); // 2026-11-22T12:48:00.000Z
  return `j${iso.slice(0, 10).replaceAll('-', '')}-${iso.slice(11, 19).replaceAll(':', '')}-${random()}`;
}

/**
 * Job ids that never repeat within one agent: 16 random bits alone repeat within a second now and
 * then once jobs come by the dozen (a stick mounted again and again, a busy profiles folder), and
 * one id would then name two jobs' history, log file and marker. The ids of the current second are
 * remembered; an id of an earlier second cannot come again.
 */
export function jobIdSource(now: () => Date = () => new Date(), random?: () => string): () => string {
  let second = '';
  const used = new Set<string>();
  return () => {
    for (;;) {
      const id = newJobId(now(), random);
      const prefix = id.slice(0, id.lastIndexOf('-'));
      if (prefix !== second) {
        second = prefix;
        used.clear();
      }
      if (!used.has(id)) {
        used.add(id);
        return id;
      }
    }
  };
}

export const JOB_ID_PATTERN = /^j\d{8}-\d{6}-[0-9a-f]{4}$/;
