import winston from 'winston';
import type { Redactor } from '../core/redact.js';
import { visibleText } from '../core/visible-text.js';

/**
 * The daemon's own log (the journal under systemd, a terminal otherwise), on winston. Redaction is
 * the first format, so no transport ever sees a secret. Under journald (JOURNAL_STREAM set) each
 * line starts with a `<N>` syslog priority (sd-daemon(3)) and has no colours or timestamps: the
 * journal keeps its own. Every line of a job carries the job's id. One message is one line: its
 * control characters, newlines included, are escaped (visibleText), so a name or a device's
 * sentence in it can neither start a line of its own nor send escape sequences to a terminal.
 */

export const LogLevel = { Error: 'error', Warn: 'warn', Info: 'info', Debug: 'debug' } as const;
export type LogLevel = (typeof LogLevel)[keyof typeof LogLevel];

/** winston's formatted-output key (triple-beam's MESSAGE), without importing triple-beam. */
const MESSAGE = Symbol.for('message');

/** syslog priorities for sd-daemon's `<N>` prefixes. */
const PRIORITY: Record<LogLevel, number> = { error: 3, warn: 4, info: 6, debug: 7 };
const COLOUR: Record<LogLevel, string> = { error: '\x1b[31m', warn: '\x1b[33m', info: '\x1b[32m', debug: '\x1b[90m' };

export interface AgentLogger {
  log(level: LogLevel, message: string, job?: string): void;
  setLevel(level: LogLevel): void;
  /** Waits until every line so far has been handed to the stream. */
  close(): Promise<void>;
}

export interface AgentLoggerOptions {
  level: LogLevel;
  /** Knows the secrets of the moment (agent.yaml's, the running jobs'). */
  redactor: Redactor;
  stream?: NodeJS.WritableStream & { isTTY?: boolean };
  env?: NodeJS.ProcessEnv;
}

function isJournal(env: NodeJS.ProcessEnv = process.env): boolean {
  return env.JOURNAL_STREAM !== undefined && env.JOURNAL_STREAM !== '';
}

export function createAgentLogger(options: AgentLoggerOptions): AgentLogger {
  const env = options.env ?? process.env;
  const stream = options.stream ?? process.stdout;
  const journal = isJournal(env);
  const colour = !journal && stream.isTTY === true && env.NO_COLOR === undefined;

  const redact = winston.format((info) => {
    const fields = info as Record<string, unknown>;
    for (const key of Object.keys(fields)) if (key !== 'level') fields[key] = options.redactor.value(fields[key]);
    info.message = options.redactor.text(String(info.message));
    return info;
  });

  const line = winston.format((info) => {
    const level = info.level as LogLevel;
    const job = typeof info.job === 'string' ? `[${visibleText(info.job)}] ` : '';
    const text = visibleText(String(info.message));
    const name = colour ? `${COLOUR[level] ?? ''}${level.padEnd(5)}\x1b[0m` : level.padEnd(5);
    (info as Record<string | symbol, unknown>)[MESSAGE] = journal
      ? `<${PRIORITY[level] ?? 6}>${job}${text}`
      : `${new Date().toISOString()} ${name} ${job}${text}`;
    return info;
  });

  const transport = new winston.transports.Stream({ stream, eol: '\n' });
  const logger = winston.createLogger({
    level: options.level,
    levels: { error: 0, warn: 1, info: 2, debug: 3 },
    format: winston.format.combine(redact(), line()),
    transports: [transport],
  });

  return {
    log(level, message, job) {
      logger.log({ level, message, ...(job === undefined ? {} : { job }) });
    },
    setLevel(level) {
      logger.level = level;
    },
    close() {
      return new Promise<void>((resolve) => {
        // Stream transport writes synchronously into the stream; wait for the stream to drain.
        if ((stream as { writableNeedDrain?: boolean }).writableNeedDrain === true)
          stream.once('drain', () => resolve());
        else resolve();
      });
    },
  };
}
