import type { Command } from 'commander';
import { DEFAULT_STATUS_FILE, runNotify } from '../notify/index.js';

export function registerNotifyCommand(program: Command): void {
  program
    .command('notify')
    .description(
      "desktop notifications for the technician (run as the desktop user, systemd user unit mpprov-notify): follow the agent's status file and call notify-send when a job ends",
    )
    .option('--status-file <file>', "the agent's status file", DEFAULT_STATUS_FILE)
    .action(async (flags: { statusFile: string }) => {
      const controller = new AbortController();
      for (const signal of ['SIGTERM', 'SIGINT'] as const) process.once(signal, () => controller.abort());
      await runNotify({
        statusFile: flags.statusFile,
        signal: controller.signal,
        out: (line) => process.stdout.write(`mpprov notify: ${line}\n`),
        warn: (line) => process.stderr.write(`mpprov notify: warning: ${line}\n`),
      });
      // A notify-send still running must not hold the exit: it ends on its own timeout.
      process.exit(0);
    });
}
