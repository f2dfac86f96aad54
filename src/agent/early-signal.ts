/**
 * A signal that may come before the daemon can act on it. Without a handler Node takes the default
 * action, and for SIGHUP that is to die: systemd's `ExecReload` during start-up would kill the agent,
 * and where SIGHUP is inherited as ignored it would be lost without a word. Held from the first line
 * of start-up, the signal is remembered and acted on once, as soon as the real handler exists.
 */
export interface HeldSignal {
  /** Hands the signal to `handler` from now on; runs it once at once when the signal came while held. */
  handOver(handler: () => void): void;
  /** Stops listening (start-up gave up, or the daemon stops). */
  release(): void;
}

export function holdSignal(signal: NodeJS.Signals, target: NodeJS.EventEmitter = process): HeldSignal {
  let cameWhileHeld = false;
  let handler: (() => void) | undefined;
  const listener = (): void => {
    if (handler === undefined) cameWhileHeld = true;
    else handler();
  };
  target.on(signal, listener);
  return {
    handOver(next) {
      handler = next;
      if (cameWhileHeld) {
        cameWhileHeld = false;
        next();
      }
    },
    release() {
      handler = undefined;
      target.off(signal, listener);
    },
  };
}
