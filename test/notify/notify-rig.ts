import { chmod, mkdir, readFile, rename, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import type { AgentStatus, StatusJob } from '../../src/core/agent-status.js';
import { tempFolder } from '../support/temp-folder.js';

/**
 * The rig of the `mpprov notify` tests: a fake `notify-send` that records every call's argument
 * vector, and a status file written the way the agent writes it (a .tmp file, then a rename).
 */

/**
 * A folder holding a fake `notify-send`, to be put first on PATH. Each call appends one record to
 * `record`: the argument count, then each argument, every field NUL-terminated (an argument
 * cannot hold a NUL, so any text, newlines and quotes included, comes back exactly).
 */
export async function fakeNotifySend(): Promise<{ bin: string; record: string; calls(): Promise<string[][]> }> {
  const dir = tempFolder('notify-send');
  const bin = join(dir, 'bin');
  const record = join(dir, 'calls');
  await mkdir(bin);
  await writeFile(join(bin, 'notify-send'), `#!/bin/sh\nprintf '%s\\0' "$#" "$@" >> '${record}'\n`);
  await chmod(join(bin, 'notify-send'), 0o755);
  return { bin, record, calls: () => readCalls(record) };
}

async function readCalls(record: string): Promise<string[][]> {
  const text = await readFile(record, 'utf8').catch(() => '');
  const fields = text.split('\0');
  fields.pop(); // after the last terminator
  const calls: string[][] = [];
  for (let i = 0; i < fields.length;) {
    const count = Number(fields[i]);
    calls.push(fields.slice(i + 1, i + 1 + count));
    i += 1 + count;
  }
  return calls;
}

/** Writes the status file as the agent does: the whole text to FILE.tmp, then a rename over FILE. */
export async function writeStatus(
  file: string,
  jobs: StatusJob[] | string,
  agent: Partial<AgentStatus['agent']> = {},
): Promise<void> {
  const text =
    typeof jobs === 'string'
      ? jobs
      : JSON.stringify({
          format: 1,
          agent: {
            pid: 4242,
            version: '0.1.0',
            hostname: 'laptop',
            started: new Date(Date.now() - 60_000).toISOString(),
            stopped: false,
            ...agent,
          },
          updated: new Date().toISOString(),
          jobs,
        });
  await writeFile(`${file}.tmp`, text, { mode: 0o644 });
  await rename(`${file}.tmp`, file);
}

const device = (name: string, state: StatusJob['devices'][number]['state']): StatusJob['devices'][number] => ({
  name,
  url: 'https://192.0.2.10',
  state,
  at: state === 'running' ? 'step 3/7 upload ca_cert' : state,
});

/** A stick job under way. */
export function runningJob(id: string, label: string, devices: string[], kind: StatusJob['kind'] = 'stick'): StatusJob {
  return {
    id,
    kind,
    label,
    location: kind === 'stick' ? `/media/tech/${label}` : `/etc/mpprov/profiles/${label}`,
    config: 'mpprov.yaml',
    started: new Date(Date.now() - 5_000).toISOString(),
    banner: 'WORKING',
    stage: 'applying',
    devices: devices.map((name) => device(name, 'running')),
    steps: devices.map((name) => ({
      device: name,
      text: 'upload ca_cert',
      state: 'running',
      started: new Date().toISOString(),
    })),
  };
}

/** The same job, ended with `result` (finished now, unless `finished` says when). */
export function endedJob(
  job: StatusJob,
  result: 'CHANGED' | 'NO CHANGE' | 'OK' | 'FAILED',
  more: Partial<StatusJob> = {},
): StatusJob {
  const failed = result === 'FAILED';
  return {
    ...job,
    finished: new Date().toISOString(),
    banner: failed ? 'FAILED' : job.kind === 'profile' ? 'DONE' : 'SAFE TO REMOVE',
    result,
    summary: `${job.devices.map((d) => d.name).join(', ')}: ${failed ? 'failed' : 'changed and verified'}`,
    ...(job.kind === 'stick' ? { released: true } : {}),
    devices: job.devices.map((d) => ({ ...d, state: failed ? 'failed' : 'done' })),
    steps: job.steps.map((s) => ({ ...s, state: failed ? 'failed' : 'done', ended: new Date().toISOString() })),
    ...more,
  };
}
