import { appendFile } from 'node:fs/promises';
import { dirname } from 'node:path';
import type { Redactor } from '../core/redact.js';
import { visibleJson, visibleLines, visibleText } from '../core/visible-text.js';
import type { AgentLogger, LogLevel } from './agent-logger.js';
import { formatJobHeader, formatJobLine, type JobHeader, type LogLine } from './job-log-format.js';
import type { ResultDocument } from './result-document.js';
import { createUsbLogWriter, stickProblemText, type UsbLogWriter } from './usb-log-writer.js';
import { makeFolder } from '../core/make-folder.js';

/**
 * One job's log, written three ways at once: usb.log on the stick (when there is one), a local
 * copy `<state dir>/logs/<job id>.log`, and the agent's log (the journal). The stick may fail at
 * any moment; the other two never depend on it, and the local copy says when and why it failed.
 * Every line is escaped as it is written (formatJobLine, the agent's logger, and here for the
 * header, the RESULT line and mpprov-result.json), whatever its composer already did: a line of
 * the log is one physical line, and only `result` writes a line that begins with RESULT.
 */
export interface JobLog {
  readonly jobId: string;
  readonly localFile: string;
  /** The stick side, when the job came from a stick. */
  readonly stick: UsbLogWriter | undefined;
  header(header: JobHeader): void;
  write(level: LogLevel, text: string): void;
  writeLines(lines: readonly LogLine[]): void;
  /** The closing `RESULT: ...` line, written without the time prefix. */
  result(line: string, level: LogLevel): void;
  /** Local log and agent log only (things that concern the laptop, not the stick). */
  writeLocal(level: LogLevel, text: string): void;
  /** mpprov-result.json on the stick (when there is one), redacted like every line. */
  writeResult(document: ResultDocument): void;
  flush(): Promise<void>;
}

export interface JobLogOptions {
  jobId: string;
  localFile: string;
  logger: AgentLogger;
  /** Knows the secrets of this job (stick and agent.yaml); every text written passes it. */
  redactor: Redactor;
  stick?: { root: string; device: number; serialize?: <T>(write: () => Promise<T>) => Promise<T> };
  now?: () => Date;
}

export function createJobLog(options: JobLogOptions): JobLog {
  const { jobId, localFile, logger } = options;
  const now = options.now ?? (() => new Date());
  const clean = (text: string): string => options.redactor.text(text);
  let local: Promise<void> = makeFolder(dirname(localFile), 0o700).then(() => undefined);
  let localFailed = false;
  const toLocal = (text: string): void => {
    local = local
      .then(() => appendFile(localFile, text, { mode: 0o600 }))
      .catch((error: unknown) => {
        // The state dir failing must not stop the job either; say it once in the journal.
        if (!localFailed)
          logger.log('error', `cannot write the local job log ${localFile}: ${(error as Error).message}`, jobId);
        localFailed = true;
      });
  };

  const stick =
    options.stick === undefined
      ? undefined
      : createUsbLogWriter({
          root: options.stick.root,
          device: options.stick.device,
          ...(options.stick.serialize === undefined ? {} : { serialize: options.stick.serialize }),
          onProblem: (status) => {
            const text = `usb.log: ${stickProblemText(status.problem)} (${status.detail}); this log was kept locally in ${localFile}`;
            toLocal(formatJobLine(now(), jobId, text));
            logger.log('warn', text, jobId);
          },
          onRestored: () =>
            write(
              'warn',
              'usb.log: the stick held only usb.log.tmp (an earlier write was cut by a power loss or a pull); it was put back as usb.log',
            ),
        });

  const write = (level: LogLevel, text: string, localOnly = false): void => {
    const safe = clean(text);
    const line = formatJobLine(now(), jobId, safe);
    toLocal(line);
    if (!localOnly) stick?.append(line);
    logger.log(level, safe, jobId);
  };

  return {
    jobId,
    localFile,
    stick,
    header(header) {
      // The header's own lines, each escaped again: its fields come from the stick.
      const text = visibleLines(clean(formatJobHeader(header)));
      toLocal(text);
      stick?.append(text);
      const where =
        header.source === 'stick'
          ? `stick ${header.label} at ${header.location}`
          : `profile ${header.location}/${header.label}`;
      logger.log(
        'info',
        `job started: ${where}, ${header.configName} sha256 ${header.configSha256.slice(0, 12)}`,
        jobId,
      );
    },
    write: (level, text) => write(level, text),
    writeLines(lines) {
      for (const line of lines) write(line.level, line.text);
    },
    result(line, level) {
      const safe = `${visibleText(clean(line).replace(/\n$/, ''))}\n`;
      toLocal(safe);
      stick?.append(safe);
      logger.log(level, safe.trimEnd(), jobId);
    },
    writeLocal: (level, text) => write(level, text, true),
    writeResult(document) {
      stick?.writeResult(`${visibleJson(options.redactor.json(document, 2))}\n`);
    },
    async flush() {
      await stick?.flush();
      await local;
    },
  };
}
