import type { ApplyEvent, DeviceResult } from '../apply/index.js';
// The one value report needs from apply, from its own file: apply's index loads the device client.
import { pathsWords } from '../apply/path-report.js';
import { visibleText } from '../core/visible-text.js';
import { waitingText } from './job-log-format.js';

/**
 * Shows a long apply as it happens. On a terminal: a step list per device with elapsed time,
 * redrawn in place. Otherwise: plain lines, one per finished step, and a waiting line at most
 * every few seconds, so logs stay readable. Device names, URLs and sentences come from the stick
 * and the devices: every line is written with its control characters escaped (visibleText), so
 * none can move the cursor, retitle the terminal or end a line early.
 */
export interface ProgressDisplay {
  onEvent(event: ApplyEvent): void;
  stop(): void;
}

interface DeviceLines {
  header: string;
  steps: { text: string; state: 'running' | 'done' | 'failed'; started: number; elapsedMs?: number; note?: string }[];
  result?: string;
}

export function createProgressDisplay(
  stream: NodeJS.WritableStream & { isTTY?: boolean },
  options: { tty?: boolean } = {},
): ProgressDisplay {
  const tty = options.tty ?? stream.isTTY === true;
  return tty ? terminalDisplay(stream) : plainDisplay(stream);
}

function plainDisplay(stream: NodeJS.WritableStream): ProgressDisplay {
  const lastWait = new Map<string, number>();
  const lastPath = new Map<string, string>();
  const write = (line: string): void => void stream.write(`${visibleText(line)}\n`);
  return {
    onEvent(event) {
      switch (event.type) {
        case 'device-start':
          write(`[${event.device}] connecting to ${event.url}`);
          break;
        case 'plan':
          write(`[${event.device}] ${event.hasChanges ? `${event.steps.length} step(s) to run` : 'nothing to change'}`);
          for (const refusal of event.refusals) write(`[${event.device}] REFUSED: ${refusal}`);
          break;
        case 'step-start':
          write(`[${event.device}] ${event.index + 1}/${event.total} ${event.description} ...`);
          break;
        case 'step-done':
          write(`[${event.device}] ${event.index + 1} done (${seconds(event.elapsedMs)})`);
          break;
        case 'step-failed':
          write(`[${event.device}] ${event.index + 1} FAILED after ${seconds(event.elapsedMs)}: ${event.error}`);
          break;
        case 'waiting': {
          // Per step: each wait (the restart's, then 802.1X's) counts its time from its own start.
          const key = `${event.device}\0${event.description}`;
          const last = lastWait.get(key) ?? 0;
          if (event.elapsedMs - last >= 5_000 || last === 0) {
            lastWait.set(key, Math.max(1, event.elapsedMs));
            write(`[${event.device}] ${waitingText(event.elapsedMs, event.reason, event.description)}`);
          }
          break;
        }
        case 'warning':
          write(`[${event.device}] WARNING: ${event.message}`);
          break;
        case 'rollback':
          write(`[${event.device}] ${event.message}`);
          break;
        case 'service-check-start':
          write(`[${event.device}] confirm the service sees it (${event.hostname}, up to ${event.waitS} s) ...`);
          break;
        case 'service-waiting': {
          const key = `service ${event.device}`;
          const last = lastWait.get(key) ?? 0;
          if (event.elapsedMs - last >= 5_000 || last === 0) {
            lastWait.set(key, Math.max(1, event.elapsedMs));
            write(`[${event.device}] waiting for the service (${seconds(event.elapsedMs)}): ${event.reason}`);
          }
          break;
        }
        case 'service-check-done':
          write(
            `[${event.device}] ${event.outcome.connected ? '' : 'NOT CONFIRMED: '}${event.outcome.sentence} (${seconds(event.outcome.waitedMs)})`,
          );
          break;
        case 'service-paths-start':
          write(
            `[${event.device}] make sure ${event.targets.length} path(s) exist and measure (up to ${event.waitS} s) ...`,
          );
          break;
        case 'service-path': {
          // Said when what the path says changes (found, created, measuring), not at every round.
          const key = `${event.device}\0${event.target}`;
          if (lastPath.get(key) !== event.sentence) {
            lastPath.set(key, event.sentence);
            write(`[${event.device}] ${event.sentence} (${seconds(event.elapsedMs)})`);
          }
          break;
        }
        case 'service-paths-done':
          for (const path of event.paths)
            write(`[${event.device}] ${path.measuring ? '' : 'NOT CONFIRMED: '}${path.sentence}`);
          break;
        case 'device-result':
          write(
            `[${event.result.device}] ${event.result.outcome.toUpperCase()}: ${event.result.message}${serviceNote(event.result)}`,
          );
          break;
      }
    },
    stop() {},
  };
}

/**
 * A line cut to the terminal's width: a line that wrapped would take two rows, and the redraw,
 * which moves the cursor up one row per line, would then leave a broken step list behind.
 */
export function fitLine(line: string, columns: number | undefined): string {
  if (columns === undefined || columns < 2) return line;
  const chars = [...line];
  return chars.length < columns ? line : `${chars.slice(0, columns - 2).join('')}…`;
}

function terminalDisplay(stream: NodeJS.WritableStream & { columns?: number }): ProgressDisplay {
  const devices = new Map<string, DeviceLines>();
  const warnings: string[] = [];
  let drawn = 0;
  const draw = (): void => {
    const now = Date.now();
    const lines: string[] = [...warnings.map((w) => `! ${w}`)];
    for (const d of devices.values()) {
      lines.push(d.header);
      for (const s of d.steps) {
        const mark = s.state === 'done' ? '[x]' : s.state === 'failed' ? '[!]' : '[~]';
        const elapsed = seconds(s.elapsedMs ?? now - s.started);
        lines.push(`  ${mark} ${s.text}  ${elapsed}${s.note === undefined ? '' : `  ${s.note}`}`);
      }
      if (d.result !== undefined) lines.push(`  ${d.result}`);
    }
    let out = drawn > 0 ? `\x1b[${drawn}A` : '';
    // Read at every draw: the terminal may have been resized since.
    // Escaped before the cut, so the cut counts the characters the terminal will show.
    for (const line of lines) out += `\x1b[2K${fitLine(visibleText(line), stream.columns)}\n`;
    stream.write(out);
    drawn = lines.length;
  };
  const timer = setInterval(draw, 250);
  timer.unref();
  const device = (name: string): DeviceLines => {
    let d = devices.get(name);
    if (d === undefined) devices.set(name, (d = { header: name, steps: [] }));
    return d;
  };
  return {
    onEvent(event) {
      switch (event.type) {
        case 'device-start':
          device(event.device).header = `${event.device} (${event.url})`;
          break;
        case 'plan':
          if (!event.hasChanges) device(event.device).header += ': nothing to change';
          break;
        case 'step-start':
          device(event.device).steps.push({ text: event.description, state: 'running', started: Date.now() });
          break;
        case 'step-done':
        case 'step-failed': {
          const step = device(event.device).steps.at(-1);
          if (step !== undefined) {
            step.state = event.type === 'step-done' ? 'done' : 'failed';
            step.elapsedMs = event.elapsedMs;
            step.note = event.type === 'step-failed' ? event.error : undefined;
          }
          break;
        }
        case 'waiting': {
          const step = device(event.device).steps.at(-1);
          if (step !== undefined) step.note = `not answering yet, as expected (${event.reason})`;
          break;
        }
        case 'warning':
          warnings.push(`${event.device}: ${event.message}`);
          break;
        case 'rollback':
          device(event.device).steps.push({ text: event.message, state: 'done', started: Date.now(), elapsedMs: 0 });
          break;
        case 'service-check-start':
          device(event.device).steps.push({
            text: 'confirm the service sees it',
            state: 'running',
            started: Date.now(),
          });
          break;
        case 'service-waiting': {
          const step = device(event.device).steps.at(-1);
          if (step !== undefined) step.note = `waiting: ${event.reason}`;
          break;
        }
        case 'service-check-done': {
          const step = device(event.device).steps.at(-1);
          if (step !== undefined) {
            // [!] with the reason; the device's own result line still says what the Admin API showed.
            step.state = event.outcome.connected ? 'done' : 'failed';
            step.elapsedMs = event.outcome.waitedMs;
            step.note = event.outcome.sentence;
          }
          break;
        }
        case 'service-paths-start':
          device(event.device).steps.push({
            text: `make sure ${event.targets.length} path(s) exist and measure`,
            state: 'running',
            started: Date.now(),
          });
          break;
        case 'service-path': {
          const step = device(event.device).steps.at(-1);
          if (step !== undefined) step.note = event.sentence;
          break;
        }
        case 'service-paths-done': {
          const step = device(event.device).steps.at(-1);
          if (step !== undefined) {
            const all = event.paths.every((p) => p.measuring);
            step.state = all ? 'done' : 'failed';
            step.elapsedMs = Date.now() - step.started;
            step.note = `${pathsWords(event.paths) ?? ''}${
              all
                ? ''
                : `: ${event.paths
                    .filter((p) => !p.measuring)
                    .map((p) => p.sentence)
                    .join('; ')}`
            }`;
          }
          break;
        }
        case 'device-result':
          device(event.result.device).result =
            `${event.result.outcome.toUpperCase()}: ${event.result.message}${serviceNote(event.result)}`;
          break;
      }
      draw();
    },
    stop() {
      clearInterval(timer);
      draw();
    },
  };
}

/** The device's result line: connected or why not, then how many of its paths measure. */
function serviceNote(result: DeviceResult): string {
  const service = result.service;
  if (service === undefined) {
    const unchecked = result.pathsNotChecked ?? [];
    return unchecked.length === 0 ? '' : `; ${unchecked.map((p) => p.sentence).join('; ')}`;
  }
  const paths = pathsWords(service.paths);
  const pathsPart = paths === undefined ? '' : `, ${paths}`;
  if (service.connected) return `; connected to the service${pathsPart}`;
  return `; NOT CONFIRMED by the service: ${service.sentence}${pathsPart}`;
}

function seconds(ms: number): string {
  return `${(ms / 1000).toFixed(1)} s`;
}
