import { JobBanner, type StatusJob } from '../core/agent-status.js';
import { visibleText } from '../core/visible-text.js';

/** One desktop notification: notify-send's summary, body and urgency. */
export interface Announcement {
  urgency: 'normal' | 'critical';
  summary: string;
  body: string;
}

const NOTIFICATION_SUMMARY = 'mpprov';

/** Notification bubbles show a few lines; the full text is in usb.log and `mpprov status`. */
const BODY_LIMIT = 300;
const NAME_LIMIT = 80;

/**
 * The notification for a job that has ended, per the status contract:
 * "Stick MPSTICK: branch-12-mp1 configured, safe to remove", "... already configured, nothing
 * changed, safe to remove", or (critical) "Stick MPSTICK: branch-12-mp1 FAILED: <advice or summary>".
 * Every text comes from a stick or a profile: control characters are shown escaped (visibleText: a
 * NUL would make the argument vector invalid, a newline would fake a second line in the journal, a
 * bidi control would reorder the bubble) and lengths capped.
 */
export function announcementFor(job: StatusJob): Announcement {
  const what = `${job.kind === 'profile' ? 'Profile' : 'Stick'} ${clean(job.label, NAME_LIMIT) || '(no label)'}`;
  const devices = job.devices.map((d) => clean(d.name, NAME_LIMIT)).filter((name) => name.length > 0);
  const head = devices.length === 0 ? what : `${what}: ${devices.join(', ')}`;
  // "Safe to remove" only once the agent unmounted the stick (a profile job has none to remove);
  // otherwise what the agent found: unmount it first, or insert it again for its result.
  const removable = job.kind === 'stick' && job.released === true;
  const removal =
    job.kind === 'stick' && !removable && job.removal !== undefined ? ` ${clean(job.removal, BODY_LIMIT)}` : '';
  if (job.result === 'FAILED' || job.banner === JobBanner.Failed) {
    const why =
      clean(job.advice ?? '', BODY_LIMIT) || clean(job.summary ?? '', BODY_LIMIT) || 'see usb.log or `mpprov status`';
    // The advice already ends with what to do with the stick (report/result-file.ts).
    return { urgency: 'critical', summary: NOTIFICATION_SUMMARY, body: cut(`${head} FAILED: ${why}`) };
  }
  const done = job.result === 'NO CHANGE' ? 'already configured, nothing changed' : 'configured';
  return {
    urgency: 'normal',
    summary: NOTIFICATION_SUMMARY,
    body: cut(
      removable ? `${head} ${done}, safe to remove` : removal === '' ? `${head} ${done}` : `${head} ${done}.${removal}`,
    ),
  };
}

/** Control characters escaped visibly, runs of blanks (tabs among them) one space; then the cap. */
function clean(text: string, limit: number): string {
  return cut(visibleText(text).replace(/\s+/g, ' ').trim(), limit);
}

function cut(text: string, limit = BODY_LIMIT): string {
  return text.length <= limit ? text : `${text.slice(0, limit - 1).trimEnd()}…`;
}
