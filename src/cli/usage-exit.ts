import type { Command, CommanderError } from 'commander';
import { ExitStatus } from '../core/errors.js';

/**
 * A usage error (an unknown command or option, a missing argument, an option value its parser
 * refuses) exits 64, EX_USAGE of sysexits(3), as `mpprov simulate`'s own flag errors already do:
 * a script can tell "you called me wrong" from 1, "the configuration or a device failed". Help and
 * --version still exit 0. Commander has printed its message (and the help) before this runs.
 * Set on the program before any command is added: commander copies it to each subcommand then.
 */
export function exitUsageErrorsWith64(program: Command): Command {
  return program.exitOverride((error: CommanderError) => {
    process.exit(error.exitCode === 0 ? ExitStatus.Ok : ExitStatus.Usage);
  });
}
