import { execFile, spawn, type ChildProcess } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { afterEach } from 'vitest';

/**
 * The tests' one way to run `mpprov`: the command package.json's `bin` names (the bundle's
 * launcher dist/mpprov.cjs and mpprov-app.cjs, what `npm run build` makes, `npx mpprov` runs and
 * the .deb installs) as a real child process of this Node, with the test's arguments, environment,
 * working folder and stdin, and NO_COLOR set so output compares as plain text.
 * MPPROV_TEST_CLI=dist runs tsc's dist/cli/main.js instead: a development aid (stack traces
 * into src/ files), never what a user runs.
 */

export const repoRoot = fileURLToPath(new URL('../../', import.meta.url));
/** Which build the tests run: "bundle" (package.json's `bin`) or "dist" (dist/cli/main.js, tsc's output). */
export const cliKind: 'dist' | 'bundle' = cliKindOf(process.env.MPPROV_TEST_CLI);
/** The file package.json's `bin` names for `mpprov`, relative to the repository. */
export const binEntry = binOf(`${repoRoot}package.json`);
/** The CLI's entry file, relative to the repository (or to a copy of its dist/). */
export const cliEntry = cliKind === 'bundle' ? binEntry : 'dist/cli/main.js';
export const cliPath = `${repoRoot}${cliEntry}`;

function cliKindOf(value: string | undefined): 'dist' | 'bundle' {
  if (value === undefined || value === '' || value === 'bundle') return 'bundle';
  if (value === 'dist') return 'dist';
  throw new Error(`MPPROV_TEST_CLI=${value}: expected "bundle" (package.json's bin) or "dist" (dist/cli/main.js)`);
}

function binOf(packageJson: string): string {
  const { bin } = JSON.parse(readFileSync(packageJson, 'utf8')) as { bin?: Record<string, string> };
  const entry = bin?.mpprov;
  if (entry === undefined) throw new Error(`${packageJson}: no "bin": { "mpprov": ... }`);
  return entry.replace(/^\.\//, '');
}

export interface CliOptions {
  /** Default: the repository root, so repository-relative paths work as in a terminal there. */
  cwd?: string;
  /** Added to this process's environment. */
  env?: NodeJS.ProcessEnv;
  /** Written to stdin, which is then closed (runCli only; startNode's stdin is /dev/null). */
  input?: string;
}

export interface Exit {
  code: number | null;
  signal: NodeJS.Signals | null;
}

export interface CliResult extends Exit {
  stdout: string;
  stderr: string;
}

/** Runs `mpprov ARGS` to its end. */
export function runCli(args: readonly string[], options: CliOptions = {}): Promise<CliResult> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [cliPath, ...args], {
      cwd: options.cwd ?? repoRoot,
      env: environment(options),
      stdio: ['pipe', 'pipe', 'pipe'],
    });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (chunk: Buffer) => (stdout += chunk.toString()));
    child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
    child.on('error', reject);
    child.on('close', (code, signal) => resolve({ code, signal, stdout, stderr }));
    child.stdin.end(options.input ?? '');
  });
}

/** A process that keeps running (`mpprov simulate`, `mpprov run`): its output so far, and how it ended. */
// Function-valued properties, not methods: they are closures over the child, so passing
// `running.output` or `running.stop` on is safe, and the type says so.
export interface RunningProcess {
  child: ChildProcess;
  stdout: () => string;
  stderr: () => string;
  /** stdout and stderr, in that order. */
  output: () => string;
  exited: Promise<Exit>;
  /** stdout's first line once it is complete, or all of stdout if the process ends first. */
  firstLine: () => Promise<string>;
  /** Sends `signal` unless it already ended, and waits for the end. */
  stop: (signal?: NodeJS.Signals) => Promise<Exit>;
}

/** Starts `node ARGV` (a script of the test's own, or cliPath and the CLI's arguments) and returns at once. */
export function startNode(argv: readonly string[], options: Omit<CliOptions, 'input'> = {}): RunningProcess {
  const child = spawn(process.execPath, argv, {
    cwd: options.cwd ?? repoRoot,
    env: environment(options),
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let stdout = '';
  let stderr = '';
  child.stdout?.on('data', (chunk: Buffer) => (stdout += chunk.toString()));
  child.stderr?.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
  // 'exit', not 'close': daemons a process leaves behind may hold its pipes open (a test about that waits for the exit).
  const exited = new Promise<Exit>((resolve) => child.once('exit', (code, signal) => resolve({ code, signal })));
  const closed = new Promise<void>((resolve) => child.once('close', () => resolve()));
  const spawnFailed = new Promise<never>((_resolve, reject) => child.once('error', reject));
  // Handled here too: a process nobody asks for its first line must not leave an unhandled rejection.
  spawnFailed.catch(() => undefined);
  const firstLine = async (): Promise<string> => {
    const line = new Promise<string>((resolve) => {
      const check = () => {
        const newline = stdout.indexOf('\n');
        if (newline >= 0) {
          child.stdout?.off('data', check);
          resolve(stdout.slice(0, newline));
        }
      };
      child.stdout?.on('data', check);
      check();
      void closed.then(() => resolve(stdout.split('\n')[0] ?? ''));
    });
    return Promise.race([line, spawnFailed]);
  };
  return {
    child,
    stdout: () => stdout,
    stderr: () => stderr,
    output: () => stdout + stderr,
    exited,
    firstLine,
    async stop(signal = 'SIGTERM') {
      if (child.exitCode === null && child.signalCode === null) child.kill(signal);
      return exited;
    },
  };
}

/** Starts `mpprov ARGS` and returns at once. */
export function startCli(args: readonly string[], options: Omit<CliOptions, 'input'> = {}): RunningProcess {
  return startNode([cliPath, ...args], options);
}

/** A process that has printed its first line (`mpprov simulate` prints how to reach it), or ended. */
export type StartedProcess = Omit<RunningProcess, 'firstLine'> & { firstLine: string };

export interface Processes {
  startNode: (argv: readonly string[], options?: Omit<CliOptions, 'input'>) => Promise<StartedProcess>;
  startCli: (args: readonly string[], options?: Omit<CliOptions, 'input'>) => Promise<StartedProcess>;
}

/** startNode and startCli for a file or describe block, waiting for the first line; whatever still runs after a test is killed (SIGKILL). */
export function useProcesses(): Processes {
  const running: RunningProcess[] = [];
  afterEach(async () => {
    for (const p of running.splice(0)) await p.stop('SIGKILL');
  });
  const started = async (p: RunningProcess): Promise<StartedProcess> => {
    running.push(p);
    return { ...p, firstLine: await p.firstLine() };
  };
  return {
    startNode: (argv, options) => started(startNode(argv, options)),
    startCli: (args, options) => started(startCli(args, options)),
  };
}

function environment(options: CliOptions): NodeJS.ProcessEnv {
  return { ...process.env, NO_COLOR: '1', ...options.env };
}

/**
 * `mpprov validate DIR` on a real terminal (a pty from util-linux `script`), where the CLI shows the
 * source line under each problem. `script` exits with the command's status (1: invalid); the
 * output is what counts.
 */
export async function validateOnTerminal(dir: string): Promise<string> {
  const command = `exec '${process.execPath}' '${cliPath}' validate '${dir}'`;
  const outcome = await promisify(execFile)('script', ['-qfec', command, '/dev/null'], {
    cwd: repoRoot,
    encoding: 'utf8',
    env: { ...process.env, NO_COLOR: '1', TERM: 'xterm' },
  }).catch((error: { stdout?: string }) => ({ stdout: error.stdout ?? '' }));
  return outcome.stdout;
}
