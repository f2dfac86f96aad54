import { open } from 'node:fs/promises';
import type { ListenAddress } from '../config/index.js';
import type { Redactor } from '../core/redact.js';
import type { AgentLogger } from '../report/index.js';
import { startStatusPage, type StatusPage } from '../status-page/index.js';
import { JOB_ID_PATTERN } from './job-id.js';
import { serviceEventLines } from './service-event-lines.js';
import type { JobBoard } from './job-board.js';

/**
 * The daemon's side of the status page: started when agent.yaml has `status_page.listen`,
 * restarted on SIGHUP when that address changed, closed on stop. A page that cannot listen (port
 * taken) is an error in the journal, never a reason for the agent to stop provisioning.
 */

/** A job's log as the page shows it: its last 1 MiB at most (a runaway log must not flood the browser). */
const PAGE_LOG_CAP_BYTES = 1024 * 1024;

export interface StatusPageControl {
  /** Serves at `listen` (undefined: no page); a no-op when it already serves there. */
  apply(listen: ListenAddress | undefined): Promise<void>;
  close(): Promise<void>;
}

export function createStatusPageControl(options: {
  board: JobBoard;
  redactor: Redactor;
  logger: AgentLogger;
  logFile: (id: string) => string;
  /** With service.events: the state folder whose events.jsonl the page lists for the jobs' MPs. */
  eventsStateDir?: string | undefined;
}): StatusPageControl {
  let page: StatusPage | undefined;
  let serving: string | undefined;
  const key = (listen: ListenAddress): string => `${listen.host}\0${listen.port}`;

  const close = async (): Promise<void> => {
    const old = page;
    page = undefined;
    serving = undefined;
    await old?.close();
  };

  return {
    async apply(listen) {
      if (listen !== undefined && serving === key(listen)) return;
      if (page !== undefined) {
        await close();
        options.logger.log('info', 'status page closed');
      }
      if (listen === undefined) return;
      try {
        page = await startStatusPage({
          host: listen.host,
          port: listen.port,
          source: options.board,
          readLog: (id) => readCapped(options.logFile(id)),
          isJobId: (id) => JOB_ID_PATTERN.test(id),
          redact: (text) => options.redactor.text(text),
          serviceEvents:
            options.eventsStateDir === undefined
              ? undefined
              : (names) => serviceEventLines(options.eventsStateDir ?? '', names),
        });
        serving = key(listen);
        options.logger.log('info', `status page at ${page.url}`);
      } catch (error) {
        options.logger.log(
          'error',
          `cannot serve the status page at ${listen.text} (${(error as NodeJS.ErrnoException).code ?? (error as Error).message}); the agent goes on without it`,
        );
      }
    },
    close,
  };
}

/** The file's text, its tail only when it is larger than the cap; undefined when it does not exist. */
async function readCapped(file: string): Promise<string | undefined> {
  let handle;
  try {
    handle = await open(file, 'r');
  } catch {
    return undefined;
  }
  try {
    const { size } = await handle.stat();
    const start = Math.max(0, size - PAGE_LOG_CAP_BYTES);
    const buffer = Buffer.alloc(size - start);
    const { bytesRead } = await handle.read(buffer, 0, buffer.length, start);
    const text = buffer.subarray(0, bytesRead).toString('utf8');
    return start === 0
      ? text
      : `(the first ${start} bytes of this log are left out: it is larger than 1 MiB)\n${text.slice(text.indexOf('\n') + 1)}`;
  } finally {
    await handle.close();
  }
}
