import { execFile } from 'node:child_process';
import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { describe, expect, it } from 'vitest';
import { readStatusFile } from '../../src/notify/index.js';
import { tempFolder } from '../support/temp-folder.js';
import { endedJob, runningJob, writeStatus } from './notify-rig.js';

describe('readStatusFile', () => {
  it('reads a good file, ignoring fields it does not know', async () => {
    const file = join(tempFolder('status-read'), 'status.json');
    await writeFile(
      file,
      JSON.stringify({
        format: 1,
        agent: { pid: 1, version: '0.1.0', hostname: 'h', started: 'T', stopped: false, extra: 1 },
        updated: 'T',
        page: 'x',
        jobs: [{ ...endedJob(runningJob('a', 'S', ['mp1']), 'CHANGED'), later: true }],
      }),
    );
    const read = await readStatusFile(file);
    expect(read.ok).toBe(true);
    if (!read.ok) return;
    expect(read.skipped).toEqual([]);
    expect(read.status.jobs.map((j) => j.id)).toEqual(['a']);
    expect(read.status.jobs[0]).not.toHaveProperty('later');
    expect(read.status).not.toHaveProperty('page');
  });

  it('says why it cannot read: missing, not a regular file (a FIFO does not hang it), over the cap', async () => {
    const dir = tempFolder('status-read');
    expect(await readStatusFile(join(dir, 'none.json'))).toEqual({
      ok: false,
      reason: 'missing-file',
      problem: `${join(dir, 'none.json')} does not exist (yet): is the agent (mpprov.service) running?`,
    });
    const fifo = join(dir, 'fifo');
    await promisify(execFile)('mkfifo', [fifo]);
    expect(await readStatusFile(fifo)).toEqual({
      ok: false,
      reason: 'unreadable',
      problem: `${fifo} is not a regular file`,
    });
    const big = join(dir, 'status.json');
    await writeStatus(big, [runningJob('a', 'S', ['mp1'])]);
    expect(await readStatusFile(big, 100)).toEqual({
      ok: false,
      reason: 'invalid',
      problem: `${big} is larger than 100 bytes: not the agent's status file`,
    });
    expect((await readStatusFile(big)).ok).toBe(true);
  });
});
