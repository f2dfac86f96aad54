// A whole process, timed from spawn to exit: what a technician or a script waits for.
import { spawn } from 'node:child_process';
import { existsSync } from 'node:fs';
import { readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { performance } from 'node:perf_hooks';

/**
 * Runs `command args` and resolves once it has exited, with its wall time (ms, from just before
 * spawn to its exit), the clock times of both (Date.now(), to set beside the simulator's log),
 * exit status and output.
 */
export function timeProcess(command, args, { env = process.env, cwd } = {}) {
  return new Promise((resolve, reject) => {
    const startedAt = Date.now();
    const started = performance.now();
    const child = spawn(command, args, { env, cwd, stdio: ['ignore', 'pipe', 'pipe'] });
    const out = [];
    const err = [];
    child.stdout.on('data', (chunk) => out.push(chunk));
    child.stderr.on('data', (chunk) => err.push(chunk));
    let wallMs;
    let endedAt;
    child.once('error', reject);
    child.once('exit', () => {
      wallMs = performance.now() - started;
      endedAt = Date.now();
    });
    child.once('close', (status, signal) =>
      resolve({
        status,
        signal,
        wallMs,
        startedAt,
        endedAt,
        stdout: Buffer.concat(out).toString('utf8'),
        stderr: Buffer.concat(err).toString('utf8'),
      }),
    );
  });
}

const GNU_TIME = '/usr/bin/time';

/**
 * timeProcess, plus the process's own CPU seconds (user + system) and peak resident set, from
 * the kernel's accounting of the waited-for child (GNU time's wait4), so nothing is sampled.
 */
export async function timeProcessWithUsage(command, args, options = {}) {
  if (!existsSync(GNU_TIME))
    throw new Error(
      `${GNU_TIME} is missing: the bench reads a process's CPU time and peak RSS through GNU time (Debian package time)`,
    );
  const usageFile = join(tmpdir(), `mpprov-bench-usage-${process.pid}-${Math.random().toString(36).slice(2)}`);
  try {
    const result = await timeProcess(GNU_TIME, ['-f', '%U %S %M', '-o', usageFile, command, ...args], options);
    const [user, system, maxRssKiB] = (await readFile(usageFile, 'utf8'))
      .trim()
      .split('\n')
      .at(-1)
      .split(' ')
      .map(Number);
    return { ...result, cpuSeconds: user + system, peakRssMiB: maxRssKiB / 1024 };
  } finally {
    await rm(usageFile, { force: true });
  }
}
