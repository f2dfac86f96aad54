#!/usr/bin/env node
import { Command } from 'commander';
import { keepGoingWhenOutputCloses } from './closed-output.js';
import { LONG_RUNNING_COMMANDS } from './long-running.js';
import { packageVersion } from './package-version.js';
import { exitUsageErrorsWith64 } from './usage-exit.js';
import { configureZodFor } from './zod-jit.js';

/**
 * The `mpprov` command: a thin shell that parses arguments and hands over to the pipeline.
 *
 * Each command's module is imported only when that command runs: `validate` must not pay for
 * undici, winston, chokidar, the daemon or the simulator (every import is compiled and evaluated
 * before the first line runs, ~300 ms on a small machine). The first word of the command line
 * picks the entry; help, an unknown word and `describe-cli` (which walks every command) load
 * them all, so the help and commander's "did you mean" see every command.
 */

type Register = (program: Command) => void;

interface LazyCommand {
  /** The command names (first word of the command line) the module registers. */
  names: readonly string[];
  load: () => Promise<Register>;
}

/** In help order. One line per command module; a new command adds its line here. */
const COMMANDS: readonly LazyCommand[] = [
  { names: ['validate'], load: async () => (await import('./validate-command.js')).registerValidateCommand },
  { names: ['plan', 'apply'], load: async () => (await import('./apply-command.js')).registerApplyCommands },
  { names: ['preflight'], load: async () => (await import('./preflight-command.js')).registerPreflightCommand },
  { names: ['schema'], load: async () => (await import('./schema-command.js')).registerSchemaCommand },
  { names: ['run'], load: async () => (await import('./run-command.js')).registerRunCommand },
  { names: ['status'], load: async () => (await import('./status-command.js')).registerStatusCommand },
  { names: ['notify'], load: async () => (await import('./notify-command.js')).registerNotifyCommand },
  { names: ['simulate'], load: async () => (await import('./simulate-command.js')).registerSimulateCommand },
  { names: ['sign'], load: async () => (await import('./sign-command.js')).registerSignCommand },
  { names: ['stick'], load: async () => (await import('./stick-command.js')).registerStickCommands },
  {
    names: ['secrets-record'],
    load: async () => (await import('./secrets-record-command.js')).registerSecretsRecordCommand,
  },
  { names: ['observe'], load: async () => (await import('./observe-command.js')).registerObserveCommand },
  { names: ['service'], load: async () => (await import('./service-command.js')).registerServiceCommand },
  { names: ['describe-cli'], load: async () => (await import('./describe-command.js')).registerDescribeCommand },
];

const VERSION_FLAGS: readonly string[] = ['-V', '--version'];
/** Commands that need every other command registered beside them. */
const NEEDS_ALL: readonly string[] = ['describe-cli', 'help'];

/** The modules the command line needs: its command's, none for --version, every one otherwise. */
function commandsFor(args: readonly string[], commands: readonly LazyCommand[] = COMMANDS): readonly LazyCommand[] {
  const first = args[0];
  if (first !== undefined && VERSION_FLAGS.includes(first)) return [];
  const named =
    first === undefined || NEEDS_ALL.includes(first) ? undefined : commands.find((c) => c.names.includes(first));
  return named === undefined ? commands : [named];
}

const program = new Command()
  .name('mpprov')
  .description('Provision Monitoring Points from a USB stick or a profile through the Admin API v1')
  .version(packageVersion())
  .showHelpAfterError();
exitUsageErrorsWith64(program);

async function main(): Promise<void> {
  keepGoingWhenOutputCloses();
  const args = process.argv.slice(2);
  const commands = commandsFor(args);
  if (commands.length > 0) await configureZodFor(args);
  // Loaded together, registered in table order: the help lists commands as before.
  const registers = await Promise.all(commands.map((c) => c.load()));
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

// Not a top-level await: the bundle is CommonJS (packaging/bundle.mjs), which has none. A failure
// is an unhandled rejection: printed, exit code 1, as a rejected top-level await was.
void main();
