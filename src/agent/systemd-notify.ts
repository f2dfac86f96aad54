import { spawn } from 'node:child_process';

/**
 * sd_notify from Node without a native module: `systemd-notify` as a child process, only when
 * systemd asked for it (NOTIFY_SOCKET set). The unit has NotifyAccess=all because the message
 * comes from the child; `--pid` names the agent as the sender, so systemd does not lose the
 * message when the short-lived child has already exited (it runs as root, which may say so).
 */
export interface Notifier {
  ready(status: string): void;
  status(status: string): void;
  stopping(): void;
  close(): void;
}

export function startNotifier(
  env: NodeJS.ProcessEnv,
  onNotice: (message: string) => void,
  command = 'systemd-notify',
): Notifier {
  if (env.NOTIFY_SOCKET === undefined || env.NOTIFY_SOCKET === '') {
    return { ready: () => undefined, status: () => undefined, stopping: () => undefined, close: () => undefined };
  }
  let failed = false;
  const send = (...args: string[]): void => {
    const child = spawn(command, [`--pid=${process.pid}`, ...args], { stdio: 'ignore', env });
    child.once('error', (error) => {
      if (!failed) onNotice(`cannot tell systemd (${command}): ${error.message}`);
      failed = true;
    });
    child.once('exit', (code) => {
      if (code !== 0 && code !== null && !failed) onNotice(`${command} ${args.join(' ')} exited with status ${code}`);
    });
  };

  let watchdog: NodeJS.Timeout | undefined;
  const usec = Number(env.WATCHDOG_USEC);
  const forUs = env.WATCHDOG_PID === undefined || env.WATCHDOG_PID === '' || Number(env.WATCHDOG_PID) === process.pid;
  if (Number.isFinite(usec) && usec > 0 && forUs) {
    // Half the watchdog interval, as sd_watchdog_enabled(3) advises.
    watchdog = setInterval(() => send('WATCHDOG=1'), Math.max(500, Math.floor(usec / 2000)));
  }

  return {
    ready: (status) => send('--ready', `STATUS=${status}`),
    status: (status) => send(`STATUS=${status}`),
    stopping: () => send('STOPPING=1', 'STATUS=stopping'),
    close() {
      if (watchdog !== undefined) clearInterval(watchdog);
      watchdog = undefined;
    },
  };
}
