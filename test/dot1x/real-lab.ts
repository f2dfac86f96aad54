import { spawnSync } from 'node:child_process';
import { readdirSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import {
  checkRealBackendPrerequisites,
  modelDot1xBackend,
  type Dot1xBackend,
  type Dot1xResult,
  type RealDot1xBackend,
} from '../../src/simulator/index.js';

/**
 * What the real-backend tests share: the prerequisite check that makes them FAIL (never skip)
 * with a sentence naming what is missing, a backend wrapper that records every decision, and
 * the list of what a process's labs might have left behind.
 */

/** Throws the backend's own sentence ("needs root ... and the commands ...") when it cannot run here. */
export function assertRealBackendCanRun(): void {
  const { missing } = checkRealBackendPrerequisites();
  if (missing !== undefined)
    throw new Error(
      `The real 802.1X tests cannot run: ${missing} (.ci/run installs the packages; run the tests as root).`,
    );
}

export interface Recorded {
  interface: string;
  result: Dot1xResult;
}

/** A backend that passes every authentication on and keeps each decision, newest last. */
export class RecordingBackend implements Dot1xBackend {
  readonly decisions: Recorded[] = [];
  constructor(readonly inner: Dot1xBackend) {}

  async authenticate(...args: Parameters<Dot1xBackend['authenticate']>): Promise<Dot1xResult> {
    const result = await this.inner.authenticate(...args);
    this.decisions.push({ interface: args[1].name, result });
    return result;
  }

  take(): Recorded[] {
    return this.decisions.splice(0);
  }
}

export const recordingModel = (): RecordingBackend => new RecordingBackend(modelDot1xBackend);
export const recordingReal = (backend: RealDot1xBackend): RecordingBackend => new RecordingBackend(backend);

export interface Leftovers {
  namespaces: string[];
  links: string[];
  daemons: string[];
  dirs: string[];
}

/**
 * Everything a process `pid` may have created for its labs and left: network namespaces
 * `mpsim-<pid>-*`, veths `mps<pid36>-*` in our own namespace, processes whose command line names
 * one of its lab folders, and the folders `$TMPDIR/mpsim-<pid>-*`.
 */
export function leftoversOf(pid: number): Leftovers {
  const prefix = `mpsim-${pid}-`;
  const namespaces = (spawnSync('ip', ['netns', 'list'], { encoding: 'utf8' }).stdout ?? '')
    .split('\n')
    .map((l) => l.split(' ')[0] ?? '')
    .filter((n) => n.startsWith(prefix));
  const links = (spawnSync('ip', ['-o', 'link', 'show'], { encoding: 'utf8' }).stdout ?? '')
    .split('\n')
    .map((l) => /^\d+: ([^:@]+)/.exec(l)?.[1] ?? '')
    .filter((n) => n.startsWith(`mps${pid.toString(36)}-`));
  const folder = join(tmpdir(), prefix);
  const daemons: string[] = [];
  for (const entry of readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    let cmdline: string;
    try {
      cmdline = readFileSync(`/proc/${entry}/cmdline`, 'utf8').replace(/\0/g, ' ').trim();
    } catch {
      continue;
    }
    if (cmdline.includes(folder)) daemons.push(`${entry}: ${cmdline}`);
  }
  const dirs = readdirSync(tmpdir()).filter((e) => e.startsWith(prefix));
  return { namespaces, links, daemons, dirs };
}

export const NOTHING_LEFT: Leftovers = { namespaces: [], links: [], daemons: [], dirs: [] };

/** The pids running inside a network namespace (empty when it does not exist). */
export function pidsIn(namespace: string): number[] {
  return (spawnSync('ip', ['netns', 'pids', namespace], { encoding: 'utf8' }).stdout ?? '')
    .split('\n')
    .map((l) => Number(l.trim()))
    .filter((n) => Number.isInteger(n) && n > 0);
}

/** Running: it exists and is not a zombie waiting for pid 1 to reap it. */
export function isAlive(pid: number): boolean {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    return stat.slice(stat.lastIndexOf(')') + 2, stat.lastIndexOf(')') + 3) !== 'Z';
  } catch {
    return false;
  }
}
