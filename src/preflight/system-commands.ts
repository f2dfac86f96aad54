import { execFile, spawnSync } from 'node:child_process';
import { accessSync, constants } from 'node:fs';
import { delimiter, join } from 'node:path';

/** The laptop's tools a preflight drives, found on PATH (and the sbin folders a user's PATH may lack). */
export interface PreflightTools {
  ip: string;
  wpaSupplicant: string;
  udhcpc: string;
  arping: string;
  setpriv: string;
}

const NEEDED = {
  ip: { command: 'ip', pkg: 'iproute2' },
  wpaSupplicant: { command: 'wpa_supplicant', pkg: 'wpasupplicant' },
  udhcpc: { command: 'udhcpc', pkg: 'udhcpc' },
  arping: { command: 'arping', pkg: 'iputils-arping' },
  setpriv: { command: 'setpriv', pkg: 'util-linux' },
} as const satisfies Record<keyof PreflightTools, { command: string; pkg: string }>;

export interface CommandResult {
  code: number | null;
  stdout: string;
  stderr: string;
}

function findCommand(command: string): string | undefined {
  const dirs = [...(process.env.PATH ?? '').split(delimiter), '/usr/sbin', '/sbin', '/usr/bin', '/bin'];
  for (const dir of dirs.filter((d) => d !== '')) {
    const path = join(dir, command);
    try {
      accessSync(path, constants.X_OK);
      return path;
    } catch {
      // not here
    }
  }
  return undefined;
}

/** The tools, or the sentence naming what is missing and the Debian packages that bring it. */
export function findPreflightTools(): { tools: PreflightTools } | { missing: string } {
  const found: Partial<PreflightTools> = {};
  const missing: string[] = [];
  for (const [key, need] of Object.entries(NEEDED) as [keyof PreflightTools, (typeof NEEDED)[keyof PreflightTools]][]) {
    const path = findCommand(need.command);
    if (path === undefined) missing.push(`${need.command} (Debian package ${need.pkg})`);
    else found[key] = path;
  }
  if (missing.length > 0) return { missing: `preflight needs ${missing.join(', ')}` };
  return { tools: found as PreflightTools };
}

/** A short command, bounded in time; never throws. */
export function runCommand(command: string, args: readonly string[], timeoutMs = 10_000): Promise<CommandResult> {
  return new Promise((resolve) => {
    execFile(command, args, { timeout: timeoutMs, encoding: 'utf8' }, (error, stdout, stderr) => {
      const code = error === null ? 0 : typeof error.code === 'number' ? error.code : null;
      resolve({ code, stdout, stderr });
    });
  });
}

/** The same, synchronously: for signal and exit handlers, where nothing asynchronous runs any more. */
export function runCommandNow(command: string, args: readonly string[]): CommandResult {
  const result = spawnSync(command, args, { encoding: 'utf8', timeout: 5_000 });
  return { code: result.status, stdout: result.stdout ?? '', stderr: result.stderr ?? '' };
}

export function firstLine(text: string): string {
  return text.trim().split('\n')[0] ?? '';
}
