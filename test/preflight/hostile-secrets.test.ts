import { readdirSync, readFileSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { useLabPki } from '../support/lab-pki.js';
import { PEAP_PASSWORD, preflightLeftovers, runInLaptop, usePortLab } from './port-lab.js';
import { parseReport, preflightStick } from './preflight-stick.js';

/**
 * The stick's secrets while a preflight runs, watched from outside as another user of the laptop
 * would: never on a process's command line (`ps`), only in files of mode 0600 inside folders of
 * mode 0700 (the DHCP client's script, which holds none, may be 0700), and gone afterwards.
 */

const pki = useLabPki();
const rig = usePortLab();

interface Watched {
  argvWithSecret: string[];
  wrongModes: string[];
  seen: Set<string>;
}

function commandLines(): string[] {
  const lines: string[] = [];
  for (const entry of readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      lines.push(readFileSync(`/proc/${entry}/cmdline`, 'utf8').replace(/\0/g, ' '));
    } catch {
      // ended meanwhile
    }
  }
  return lines;
}

function walk(path: string, found: { path: string; mode: number; dir: boolean }[]): void {
  try {
    const stat = statSync(path);
    found.push({ path, mode: stat.mode & 0o777, dir: stat.isDirectory() });
    if (stat.isDirectory()) for (const entry of readdirSync(path)) walk(join(path, entry), found);
  } catch {
    // removed meanwhile
  }
}

function look(pid: number, watched: Watched): void {
  for (const line of commandLines()) if (line.includes(PEAP_PASSWORD)) watched.argvWithSecret.push(line);
  const found: { path: string; mode: number; dir: boolean }[] = [];
  for (const entry of readdirSync(tmpdir())) if (entry.startsWith(`mppf-${pid}-`)) walk(join(tmpdir(), entry), found);
  for (const { path, mode, dir } of found) {
    const name = path.slice(tmpdir().length + 1).replace(/^[^/]+/, 'FOLDER');
    watched.seen.add(name);
    const allowed = dir || name.endsWith('/udhcpc-script') ? 0o700 : 0o600;
    if (mode !== allowed) watched.wrongModes.push(`${name} ${mode.toString(8)}`);
  }
}

describe('the secrets during a run', () => {
  it('are on no command line, only in 0600 files of 0700 folders, and gone afterwards', async () => {
    await rig.lab.startAuthenticator(pki.dir);
    await rig.lab.startDhcp();
    const stick = preflightStick(
      pki,
      `eth1:\n  ipv4: { method: dhcp }\n  dot1x: { eap: peap, inner: mschapv2, identity: alice, password: "${PEAP_PASSWORD}", ca_cert: ca.pem }`,
      ['ca.pem'],
    );
    const watched: Watched = { argvWithSecret: [], wrongModes: [], seen: new Set() };
    let timer: NodeJS.Timeout | undefined;
    const run = await runInLaptop(
      rig.lab,
      ['preflight', stick, '--port', rig.lab.laptopIf, '--interface', 'eth1', '--json', '--timeout', '20'],
      (_stderr, child) => {
        if (timer === undefined && child.pid !== undefined) {
          const pid = child.pid;
          timer = setInterval(() => look(pid, watched), 50);
        }
      },
    );
    clearInterval(timer);
    const report = parseReport(run.stdout);
    expect(report.dot1x.outcome, report.dot1x.cause).toBe('authenticated');
    // Not vacuous: the watch saw the run's folder with the supplicant's.
    expect([...watched.seen]).toEqual(
      expect.arrayContaining(['FOLDER', 'FOLDER/port-state.json', 'FOLDER/supplicant']),
    );
    expect(watched.argvWithSecret).toEqual([]);
    expect(watched.wrongModes).toEqual([]);
    expect(`${run.stdout}${run.stderr}`).not.toContain(PEAP_PASSWORD);
    expect(rig.lab.laptopState()).toEqual(rig.before);
    expect(preflightLeftovers(run.pid, rig.lab.laptopIf)).toEqual({ namespaces: [], dirs: [], daemons: [] });
  });
});
