import { setMaxListeners } from 'node:events';
// The module, not apply/index.js: validate stops on signals too, and must not load the device client.
import { STOP_SIGNALS, type StopSignal, StoppedBySignalError } from '../apply/stopped-run.js';

/** After a stop signal, how long the run may take to end on its own before the process exits anyway. */
const LAST_RESORT_MS = 1_500;

/**
 * SIGTERM and Ctrl-C for `validate`, `plan` and `apply`: installed before anything is read, so a
 * signal ends the command within 2 s at any point. While nothing can have reached a device
 * (`immediate`), the process says where it was and exits at once. Once the engine runs, the signal
 * aborts its AbortSignal (cutting the request under way), the command prints its honest report
 * and calls `finish`; should anything still hang, an unref'd timer exits after 1.5 s with the same
 * sentence. A second signal exits at once. The exit status is 128 + the signal's number (143, 130).
 */
export interface CommandStop {
  readonly signal: AbortSignal;
  /** True while nothing can have been sent: a signal then exits at once. */
  immediate: boolean;
  /** The signal received, if any. */
  received(): StopSignal | undefined;
  /** After the command's report: prints the sentence and exits with 128 + signal number. */
  finish(): never;
}

export function stopOnSignal(options: {
  /** Where the command is and what was and was not sent, after "stopped by SIGTERM: ". */
  where: () => string;
  /** Writes one line (stderr). */
  say: (line: string) => void;
}): CommandStop {
  const controller = new AbortController();
  // Every device's client and request listens to it, by design: 50 devices are not a leak.
  setMaxListeners(0, controller.signal);
  let received: StopSignal | undefined;
  let said = false;
  const exit = (name: StopSignal, note = ''): never => {
    if (!said) {
      said = true;
      let where: string;
      try {
        where = options.where();
      } catch {
        where = 'where it stopped is unknown';
      }
      options.say(`stopped by ${name}: ${where}${note}`);
    }
    process.exit(128 + STOP_SIGNALS[name]);
  };
  const stop: CommandStop = {
    signal: controller.signal,
    immediate: true,
    received: () => received,
    finish: () => exit(received ?? 'SIGTERM'),
  };
  const on = (name: StopSignal) => (): void => {
    if (received !== undefined || stop.immediate) exit(received ?? name);
    received = name;
    controller.abort(new StoppedBySignalError(name));
    // unref'd: it never keeps a finished process alive, it only ends one that hangs.
    setTimeout(
      () => exit(name, ' (the run did not end within 1.5 s of the signal, so mpprov exited without waiting for it)'),
      LAST_RESORT_MS,
    ).unref();
  };
  process.on('SIGTERM', on('SIGTERM'));
  process.on('SIGINT', on('SIGINT'));
  return stop;
}
