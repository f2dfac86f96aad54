import { randomBytes } from 'node:crypto';

/** `j20261122-124800-3fa9`: UTC date and time of the start, and 16 random bits. Sorts by time. */
export function newJobId(now: Date = new Date(), random: () => string = () => randomBytes(2).toString('hex')): string {
  const iso = now.toISOString(); // 2026-11-22T12:48:00.000Z
  return `j${iso.slice(0, 10).replaceAll('-', '')}-${iso.slice(11, 19).replaceAll(':', '')}-${random()}`;
}

export const JOB_ID_PATTERN = /^j\d{8}-\d{6}-[0-9a-f]{4}$/;
