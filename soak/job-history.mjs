// The agent's jobs.jsonl as the soak and the bench read it: read on from where the last read
// stopped (polled every few ms, it must not cost O(jobs)), and a wait for the n-th job's end.
import { open } from 'node:fs/promises';
import { join } from 'node:path';
import { sleep } from '../bench/daemon-lib.mjs';
import { isResultFile } from './stick.mjs';

export function jobHistory(stateDir) {
  const history = { offset: 0, partial: '', starts: [], ends: [], interrupted: [] };

  /** Every start, end and interrupted record so far. */
  async function read() {
    let handle;
    try {
      handle = await open(join(stateDir, 'jobs.jsonl'), 'r');
    } catch {
      return history;
    }
    try {
      const { size } = await handle.stat();
      if (size > history.offset) {
        const buffer = Buffer.alloc(size - history.offset);
        const { bytesRead } = await handle.read(buffer, 0, buffer.length, history.offset);
        history.offset += bytesRead;
        const lines = (history.partial + buffer.subarray(0, bytesRead).toString('utf8')).split('\n');
        history.partial = lines.pop() ?? '';
        for (const line of lines.filter((l) => l.trim() !== '')) {
          const record = JSON.parse(line);
          if (record.event === 'start') history.starts.push(record);
          else if (record.event === 'end') history.ends.push(record);
          else if (record.event === 'interrupted') history.interrupted.push(record);
        }
      }
    } finally {
      await handle.close();
    }
    return history;
  }

  /**
   * The end record of the `count`-th job, once the stick shows its result file and the state dir
   * its end; undefined after `timeoutMs`.
   */
  async function waitForEnd(stick, count, timeoutMs) {
    const deadline = Date.now() + timeoutMs;
    let sawResult = false;
    for (;;) {
      if (!sawResult) sawResult = (await stick.names()).some(isResultFile);
      if (sawResult) {
        const { ends } = await read();
        if (ends.length >= count) return ends[count - 1];
      }
      if (Date.now() > deadline) return undefined;
      await sleep(sawResult ? 5 : 10);
    }
  }

  return { read, waitForEnd };
}
