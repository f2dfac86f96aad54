import { childProcess } from '../core/child-process.js';

/**
 * Runs `ssh-keygen` (openssh-client) for the signature work: never through a shell, with a time
 * limit, with its output capped while it arrives, and optionally ended by an AbortSignal (a
 * SIGTERM to mpprov must not wait for it). spawn rather than execFile because signing may need
 * the terminal as standard input for a key's passphrase, which execFile cannot pass on.
 */

export interface SshKeygenOptions {
  /** Bytes for its standard input (`-Y verify` reads the signed message there). */
  input?: Buffer;
  /** `inherit`: the terminal, so ssh-keygen can ask for a key's passphrase. Default: nothing. */
  stdin?: 'inherit' | 'ignore';
  timeoutMs: number;
  /** Default: PATH and LC_ALL=C only; signing passes SSH_AUTH_SOCK on for keys held by an agent. */
  env?: NodeJS.ProcessEnv;
  signal?: AbortSignal;
  /** The ssh-keygen to run; default the one on PATH. */
  program?: string;
}

export type SshKeygenOutcome =
  | { ran: true; exitCode: number; stdout: string; stderr: string }
  /** `missing`: not installed; `timeout` / `aborted` / `output`: ended by us; `failed`: could not start. */
  | { ran: false; why: 'missing' | 'timeout' | 'aborted' | 'output' | 'failed'; detail: string };

const MAX_OUTPUT_BYTES = 64 * 1024;

function minimalEnv(): NodeJS.ProcessEnv {
  return { PATH: process.env.PATH ?? '/usr/bin:/bin', LC_ALL: 'C' };
}

export function runSshKeygen(args: readonly string[], options: SshKeygenOptions): Promise<SshKeygenOutcome> {
  return new Promise((resolve) => {
    if (options.signal?.aborted === true)
      return resolve({ ran: false, why: 'aborted', detail: 'ssh-keygen was stopped' });
    const input = options.input;
    const child = childProcess().spawn(options.program ?? 'ssh-keygen', [...args], {
      shell: false,
      env: options.env ?? minimalEnv(),
      stdio: [input !== undefined ? 'pipe' : (options.stdin ?? 'ignore'), 'pipe', 'pipe'],
    });
    const out: Buffer[] = [];
    const err: Buffer[] = [];
    let outputBytes = 0;
    let endedBy: 'timeout' | 'aborted' | 'output' | undefined;
    let settled = false;
    const settle = (outcome: SshKeygenOutcome): void => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      options.signal?.removeEventListener('abort', onAbort);
      resolve(outcome);
    };
    const stop = (why: 'timeout' | 'aborted' | 'output'): void => {
      endedBy ??= why;
      child.kill('SIGKILL');
    };
    const onAbort = (): void => stop('aborted');
    const timer = setTimeout(() => stop('timeout'), options.timeoutMs);
    options.signal?.addEventListener('abort', onAbort, { once: true });
    const collect =
      (into: Buffer[]) =>
      (chunk: Buffer): void => {
        outputBytes += chunk.length;
        if (outputBytes > MAX_OUTPUT_BYTES) return stop('output');
        into.push(chunk);
      };
    child.stdout?.on('data', collect(out));
    child.stderr?.on('data', collect(err));
    child.on('error', (error: NodeJS.ErrnoException) => {
      settle(
        error.code === 'ENOENT'
          ? { ran: false, why: 'missing', detail: 'ssh-keygen is not installed (package openssh-client)' }
          : { ran: false, why: 'failed', detail: `ssh-keygen could not be started (${error.code ?? 'error'})` },
      );
    });
    child.on('close', (code) => {
      if (endedBy === 'timeout')
        return settle({
          ran: false,
          why: 'timeout',
          detail: `ssh-keygen did not finish within ${options.timeoutMs / 1000} s`,
        });
      if (endedBy === 'aborted') return settle({ ran: false, why: 'aborted', detail: 'ssh-keygen was stopped' });
      if (endedBy === 'output')
        return settle({
          ran: false,
          why: 'output',
          detail: `ssh-keygen wrote more than ${MAX_OUTPUT_BYTES / 1024} KiB`,
        });
      settle({
        ran: true,
        exitCode: code ?? -1,
        stdout: Buffer.concat(out).toString('utf8'),
        stderr: Buffer.concat(err).toString('utf8'),
      });
    });
    if (input !== undefined && child.stdin !== null) {
      // ssh-keygen may exit before reading all of it (a broken signature): that EPIPE is no error of ours.
      child.stdin.on('error', () => undefined);
      child.stdin.end(input);
    }
    return undefined;
  });
}

/**
 * The last line ssh-keygen wrote to standard error, reduced to printable ASCII and 200 characters:
 * passed on as its reason ("namespace does not match"), never branched on.
 */
export function sshKeygenReason(stderr: string): string | undefined {
  const lines = stderr
    .split('\n')
    .map((l) => l.replace(/[^\x20-\x7e]/g, '').trim())
    .filter((l) => l !== '');
  const last = lines[lines.length - 1];
  return last === undefined ? undefined : last.slice(0, 200);
}

/** `ED25519 key SHA256:...` from ssh-keygen's "Good ... signature ... with ED25519 key SHA256:...". */
export function signingKeyIn(output: string): string | undefined {
  const match = /with ([A-Z0-9-]{1,20}) key (SHA256:[A-Za-z0-9+/]{43})/.exec(output);
  return match === null ? undefined : `${match[1]} key ${match[2]}`;
}
