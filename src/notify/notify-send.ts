import { execFile, type ExecFileException } from 'node:child_process';
import type { Announcement } from './announcement.js';

/** notify-send talks to the session bus; a hung bus must not hold the queue forever (SIGKILL: one that ignores SIGTERM too). */
const NOTIFY_SEND_TIMEOUT_MS = 10_000;

/**
 * The argument vector, exactly: options first, `--`, then the texts, so a text starting with '-'
 * stays a text. The body is escaped for the notification markup (GNOME Shell, dunst and xfce render
 * `<a>`, `<img>`, `<b>` in a body): a device name from a stick shows as written, never as a link.
 * Escaped after the body was cut to length, so no entity is split.
 */
export function notifySendArguments(announcement: Announcement): string[] {
  return [
    '--app-name=mpprov',
    `--urgency=${announcement.urgency}`,
    '--',
    announcement.summary,
    escapeMarkup(announcement.body),
  ];
}

/** The three characters the notification body markup gives meaning to. */
function escapeMarkup(text: string): string {
  return text.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;');
}

export type Warn = (line: string) => void;

/**
 * Sends announcements through `notify-send` one at a time, in order. Never through a shell, and
 * never fatal: a missing notify-send or one that fails (no session bus) is a warning, given once
 * until a call works again, and the next announcement tries again (it may have been installed).
 */
export class NotifySender {
  private queue: Promise<void> = Promise.resolve();
  private lastWarning: string | undefined;

  constructor(
    private readonly warn: Warn,
    private readonly command = 'notify-send',
  ) {}

  send(announcement: Announcement): Promise<void> {
    this.queue = this.queue.then(() => this.run(announcement));
    return this.queue;
  }

  private run(announcement: Announcement): Promise<void> {
    return new Promise((resolve) => {
      execFile(
        this.command,
        notifySendArguments(announcement),
        { timeout: NOTIFY_SEND_TIMEOUT_MS, killSignal: 'SIGKILL', encoding: 'utf8', windowsHide: true },
        (error, _stdout, stderr) => {
          if (error === null) this.lastWarning = undefined;
          else this.warnOnce(failureText(error, stderr));
          resolve();
        },
      );
    });
  }

  private warnOnce(text: string): void {
    if (text === this.lastWarning) return;
    this.lastWarning = text;
    this.warn(text);
  }
}

function failureText(error: ExecFileException, stderr: string): string {
  if (error.code === 'ENOENT')
    return 'notify-send not found: install libnotify-bin (the notification is only in this log)';
  if (error.code === 'EACCES') return 'notify-send cannot be run: permission denied';
  if (error.killed === true)
    return `notify-send did not finish within ${NOTIFY_SEND_TIMEOUT_MS / 1000} s and was stopped (is the desktop session's D-Bus answering?)`;
  const said = stderr
    .split('\n')
    .find((line) => line.trim().length > 0)
    ?.trim()
    .slice(0, 200);
  return `notify-send failed (exit ${String(error.code)})${said === undefined ? '' : `: ${said}`}`;
}
