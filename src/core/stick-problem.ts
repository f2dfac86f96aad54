/**
 * The few ways a write to the stick fails, from the error codes of node:fs and of the stick writer
 * (durable-write.ts: ELOOP for a link, ENOTPLAIN for anything but one plain file), so the agent's
 * usb.log messages and the signer's sentences say the same thing about the same stick.
 */

/** Why a write to the stick failed, as the technician should read it. */
export const StickProblem = {
  Removed: 'removed',
  ReadOnly: 'read-only',
  Full: 'full',
  Link: 'link',
  NotPlain: 'not-plain',
  Failed: 'failed',
} as const;
export type StickProblem = (typeof StickProblem)[keyof typeof StickProblem];

export function classifyStickError(error: unknown): StickProblem {
  switch ((error as NodeJS.ErrnoException).code) {
    case 'EROFS':
    case 'EACCES':
    case 'EPERM':
      return StickProblem.ReadOnly;
    case 'ENOSPC':
    case 'EDQUOT':
    case 'EFBIG':
      return StickProblem.Full;
    case 'ENOENT':
    case 'EIO':
    case 'ENODEV':
    case 'ENOTCONN':
    case 'ECONNABORTED':
    case 'ESTALE':
    case 'EBADF':
      return StickProblem.Removed;
    case 'ELOOP':
      return StickProblem.Link;
    case 'ENOTPLAIN':
    case 'ENXIO':
      return StickProblem.NotPlain;
    default:
      return StickProblem.Failed;
  }
}
