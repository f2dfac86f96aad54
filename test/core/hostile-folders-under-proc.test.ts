import { mkdir, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { startStatusFile } from '../../src/agent/status-file.js';
import { createJobBoard } from '../../src/agent/job-board.js';
import { Redactor } from '../../src/core/redact.js';
import type { AgentLogger, LogLevel } from '../../src/report/agent-logger.js';
import { createJobLog } from '../../src/report/job-log.js';
import { snapshotStick } from '../../src/ingest/stick-snapshot.js';
import { tempFolder } from '../support/temp-folder.js';

/**
 * Folders made for paths that come from the environment or agent.yaml: the runtime directory
 * (status.json, systemd's RUNTIME_DIRECTORY), the state directory's job logs and stick snapshots.
 * Node's recursive mkdir never returns under /proc or /sys (the kernel refuses a new folder there
 * with ENOENT although its parent exists, and Node makes the parent again, forever, on a thread of
 * its pool): each of these failed at once instead, said, and the rest went on.
 */

const UNDER_PROC = '/proc/mpprov-no-such-folder/deeper';

describe('a folder asked for under /proc', () => {
  it('status.json: the problem is said, the agent goes on', async () => {
    const board = createJobBoard({ redactor: new Redactor(), version: '0.1.0', hostname: 'laptop' });
    const problems: string[] = [];
    const said = new Promise<void>((resolve) => {
      const file = startStatusFile({
        dir: UNDER_PROC,
        source: board,
        onProblem: (message) => {
          problems.push(message);
          void file.close().then(resolve);
        },
      });
    });
    await said;
    expect(problems[0]).toContain(UNDER_PROC);
  });

  it('the local job log: said once in the journal, the job goes on', async () => {
    const lines: { level: LogLevel; message: string }[] = [];
    const logger: AgentLogger = {
      log: (level, message) => void lines.push({ level, message }),
      setLevel: () => undefined,
      close: () => Promise.resolve(),
    };
    const log = createJobLog({
      jobId: 'j-proc',
      localFile: join(UNDER_PROC, 'logs/j-proc.log'),
      logger,
      redactor: new Redactor(),
    });
    log.write('info', 'a line');
    await log.flush();
    const said = lines.filter((l) => l.message.startsWith('cannot write the local job log'));
    expect(said.map((l) => l.level)).toEqual(['error']);
    expect(said[0]?.message).toContain('ENOENT');
  });

  it('a stick snapshot: refused with the file system error, nothing read', async () => {
    const stick = tempFolder('hostile-proc-folders');
    await mkdir(stick, { recursive: true });
    await writeFile(join(stick, 'mpprov.yaml'), 'version: 1\n');
    await expect(snapshotStick(stick, 'mpprov.yaml', join(UNDER_PROC, 'snapshot'))).rejects.toMatchObject({
      code: 'ENOENT',
    });
  });
});
