import { Command } from 'commander';
import { keepGoingWhenOutputCloses } from './closed-output.js';
import { LONG_RUNNING_COMMANDS } from './long-running.js';
import { packageVersion } from './package-version.js';
import { exitUsageErrorsWith64 } from './usage-exit.js';
import { configureZodFor } from './zod-jit.js';

/**
 * The `mpprov` program: a thin shell that parses arguments and hands over to the pipeline, run by
 * each entry with its table of commands (main.ts: all of them; apply-main.ts: plan and apply).
 *
 * Each command's module is imported only when that command runs: `validate` must not pay for
 * undici, winston, chokidar, the daemon or the simulator (every import is compiled and evaluated
 * before the first line runs, ~300 ms on a small machine). The first word of the command line
 * picks the entry; help, an unknown word and `describe-cli` (which walks every command) load
 * them all, so the help and commander's "did you mean" see every command.
 */

type Register = (program: Command) => void;

export interface LazyCommand {
  /** The command names (first word of the command line) the module registers. */
  names: readonly string[];
  load: () => Promise<Register>;
}

const VERSION_FLAGS: readonly string[] = ['-V', '--version'];
/** Commands that need every other command registered beside them. */
const NEEDS_ALL: readonly string[] = ['describe-cli', 'help'];

/** The modules the command line needs: its command's, none for --version, every one otherwise. */
function commandsFor(args: readonly string[], commands: readonly LazyCommand[]): readonly LazyCommand[] {
  const first = args[0];
  if (first !== undefined && VERSION_FLAGS.includes(first)) return [];
  const named =
    first === undefined || NEEDS_ALL.includes(first) ? undefined : commands.find((c) => c.names.includes(first));
  return named === undefined ? commands : [named];
}

/** Parses the command line against `commands` (in help order) and runs the command it names. */
export async function runCli(commands: readonly LazyCommand[]): Promise<void> {
  const program = new Command()
    .name('mpprov')
    .description('Provision Monitoring Points from a USB stick or a profile through the Admin API v1')
    .version(packageVersion())
    .showHelpAfterError();
  exitUsageErrorsWith64(program);
  keepGoingWhenOutputCloses();
  const args = process.argv.slice(2);
  const needed = commandsFor(args, commands);
  if (needed.length > 0) await configureZodFor(args);
  // Loaded together, registered in table order: the help lists commands as before.
  const registers = await Promise.all(needed.map((c) => c.load()));
  for (const register of registers) register(program);
  await program.parseAsync(process.argv);
  // A short command is done when its action is: its exit status is set and its files written.
  // Exit once its output is out instead of when the event loop has drained (connections closing,
  // the heap torn down piece by piece): 3-8 ms at the end of every apply. The long-running
  // commands return from their action while their work goes on.
  if (!LONG_RUNNING_COMMANDS.has(args[0] ?? '')) {
    await Promise.all([written(process.stdout), written(process.stderr)]);
    process.exit();
  }
}

/**
 * Resolves once what was written to `stream` is out. A pipe is not synchronous: what its reader
 * has not taken yet (past the 64 KiB it holds) waits in the stream, and process.exit() would drop
 * it (a stick's thousands of problems through `| less`). A reader that went away
 * (closed-output.ts) ends the wait too.
 */
function written(stream: NodeJS.WriteStream): Promise<void> {
  if (stream.destroyed || stream.writableLength === 0) return Promise.resolve();
  return new Promise((resolve) => stream.write('', () => resolve()));
}
