import { stat } from 'node:fs/promises';
import { join } from 'node:path';
import { appendOverTail, endsMidLine, replaceDurably, restoreInterruptedReplace } from '../core/durable-write.js';
import { classifyStickError, StickProblem } from '../core/stick-problem.js';
import { type ResultTxtName, writeResultTxt } from './result-file.js';

/**
 * usb.log and mpprov-result.json on the stick. Writes are queued and batched so a slow stick
 * never holds a job up; each batch is one durable append. Before every write the stick's root
 * must still be the mount the job started on (same device number): after a pull, the empty mount
 * folder on the laptop's own disk must not receive a usb.log. Once the stick fails (pulled,
 * read-only, full), the text waits in memory: `reattach` (the same stick mounted again) writes it.
 */

export const USB_LOG_NAME = 'usb.log';
const RESULT_FILE_NAME = 'mpprov-result.json';

export type StickStatus = { ok: true } | { ok: false; problem: StickProblem; detail: string };

export interface UsbLogWriter {
  readonly root: string;
  /** Queues text (whole lines, each ending in \n) for usb.log. */
  append(text: string): void;
  /** Queues a replacement of mpprov-result.json. */
  writeResult(json: string): void;
  /** Queues MPPROV-<name>.TXT at the root, removing the other result files (result-file.ts). */
  writeResultTxt(name: ResultTxtName, text: string): void;
  /**
   * A line kept as usb.log's last line while set (each batch overwrites it and puts it back at
   * the end): a stick pulled mid-job then ends with "still running", not with a misleading line.
   * `undefined` takes it away with the next text (the RESULT line).
   */
  setTrailer(line: string | undefined): void;
  /** Resolves when everything queued so far is written or has failed. */
  flush(): Promise<void>;
  status(): StickStatus;
  /** The mount went away (seen in the mount table): stop writing at once. */
  detach(): void;
  /** The same stick is mounted again: write what is waiting. */
  reattach(): Promise<void>;
  /** usb.log text not on the stick (because it failed); empty when all was written. */
  unwritten(): string;
}

export interface UsbLogWriterOptions {
  root: string;
  /** The root's device number when the job started (fs.Stats.dev). */
  device: number;
  /** Told once per failure, with a sentence for the local log. */
  onProblem?: (status: Extract<StickStatus, { ok: false }>) => void;
  /**
   * Runs one write at a time per stick across jobs (two jobs can share a stick: re-inserted with
   * another configuration while the first runs). Default: this writer's own order only.
   */
  serialize?: <T>(write: () => Promise<T>) => Promise<T>;
  /** Told when usb.log was missing and its usb.log.tmp (an earlier version's replace cut by a power loss) was copied back. */
  onRestored?: () => void;
}

/** One queue per key (a stick's root): `serialize` for createUsbLogWriter. */
export function createWriteQueues(): (key: string) => <T>(write: () => Promise<T>) => Promise<T> {
  const tails = new Map<string, Promise<unknown>>();
  return (key) => (write) => {
    const run = (tails.get(key) ?? Promise.resolve()).catch(() => undefined).then(write);
    const tail = run.catch(() => undefined);
    tails.set(key, tail);
    void tail.then(() => {
      if (tails.get(key) === tail) tails.delete(key);
    });
    return run;
  };
}

const PROBLEM_TEXT: Record<StickProblem, string> = {
  removed: 'the stick was removed',
  'read-only': 'the stick is read-only',
  full: 'the stick is full',
  link: 'a file mpprov writes on the stick is a symbolic link, which mpprov never follows: nothing was written through it',
  'not-plain':
    'a file mpprov writes on the stick is not a plain file (a FIFO, a device, a folder or a second name of another file): nothing was written to it; remove it from the stick',
  failed: 'the stick cannot be written',
};

export function stickProblemText(problem: StickProblem): string {
  return PROBLEM_TEXT[problem];
}

export function createUsbLogWriter(options: UsbLogWriterOptions): UsbLogWriter {
  const { root } = options;
  const serialize = options.serialize ?? (<T>(write: () => Promise<T>): Promise<T> => write());
  let device = options.device;
  let status: StickStatus = { ok: true };
  let pending = '';
  let pendingResult: string | undefined;
  let pendingTxt: { name: ResultTxtName; text: string } | undefined;
  let trailer = '';
  /** The trailer as it is on the stick now (what the next append overwrites). */
  let tailOnDisk = '';
  /** Whether the log's end was looked at: a log cut mid-line gets a newline before our first text. */
  let endChecked = false;
  const hasWork = (): boolean =>
    pending !== '' || pendingResult !== undefined || pendingTxt !== undefined || trailer !== tailOnDisk;
  let running: Promise<void> | undefined;

  const fail = (problem: StickProblem, detail: string): void => {
    if (!status.ok) return;
    status = { ok: false, problem, detail };
    options.onProblem?.(status);
  };

  const stillMounted = async (): Promise<boolean> => {
    try {
      return (await stat(root)).dev === device;
    } catch {
      return false;
    }
  };

  // Drivers fail a pulled stick with many codes; whatever the code, a stick gone from its mount is removed.
  const classify = async (error: unknown): Promise<StickProblem> => {
    const problem = classifyStickError(error);
    return problem !== StickProblem.Removed && !(await stillMounted()) ? StickProblem.Removed : problem;
  };

  const drain = async (): Promise<void> => {
    while (status.ok && hasWork()) {
      if (!(await stillMounted())) {
        fail(StickProblem.Removed, `${root} is no longer the stick's mount`);
        return;
      }
      if (pending !== '' || trailer !== tailOnDisk) {
        const text = pending;
        const tail = trailer;
        const onDisk = tailOnDisk;
        try {
          const file = join(root, USB_LOG_NAME);
          // The first write of this job: a log an earlier version left only as usb.log.tmp (power lost
          // inside its rename) is copied back first, and a log cut mid-line gets a newline before our text.
          let lead = '';
          if (!endChecked && onDisk === '') {
            lead = await serialize(async () => {
              if (await restoreInterruptedReplace(file, { device })) options.onRestored?.();
              return (await endsMidLine(file)) ? '\n' : '';
            });
          }
          endChecked = true;
          await serialize(() => appendOverTail(file, onDisk, lead + text + tail, { device }));
          pending = pending.slice(text.length);
          tailOnDisk = tail;
        } catch (error) {
          fail(
            await classify(error),
            `${USB_LOG_NAME}: ${(error as NodeJS.ErrnoException).code ?? (error as Error).message}`,
          );
          return;
        }
      } else if (pendingResult !== undefined) {
        const json = pendingResult;
        try {
          await serialize(() => replaceDurably(join(root, RESULT_FILE_NAME), json, { device }));
          if (pendingResult === json) pendingResult = undefined;
        } catch (error) {
          fail(
            await classify(error),
            `${RESULT_FILE_NAME}: ${(error as NodeJS.ErrnoException).code ?? (error as Error).message}`,
          );
          return;
        }
      } else if (pendingTxt !== undefined) {
        const txt = pendingTxt;
        try {
          await serialize(() => writeResultTxt(root, txt.name, txt.text, { device }));
          if (pendingTxt === txt) pendingTxt = undefined;
        } catch (error) {
          fail(
            await classify(error),
            `${txt.name}: ${(error as NodeJS.ErrnoException).code ?? (error as Error).message}`,
          );
          return;
        }
      }
    }
  };

  const kick = (): Promise<void> => {
    running ??= drain().finally(() => {
      running = undefined;
      // Text queued during the last write of a pass that has just ended.
      if (status.ok && hasWork()) void kick();
    });
    return running;
  };

  return {
    root,
    append(text) {
      pending += text;
      if (status.ok) void kick();
    },
    writeResult(json) {
      pendingResult = json;
      if (status.ok) void kick();
    },
    writeResultTxt(name, text) {
      pendingTxt = { name, text };
      if (status.ok) void kick();
    },
    setTrailer(line) {
      trailer = line ?? '';
      if (status.ok) void kick();
    },
    async flush() {
      while (running !== undefined) await running;
    },
    status: () => status,
    detach() {
      fail(StickProblem.Removed, `${root} was unmounted`);
    },
    async reattach() {
      try {
        device = (await stat(root)).dev;
      } catch {
        return;
      }
      status = { ok: true };
      await kick();
    },
    unwritten: () => pending,
  };
}
