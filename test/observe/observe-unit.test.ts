import { execFile } from 'node:child_process';
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { describe, expect, it } from 'vitest';
import { repoRoot } from '../support/run-cli.js';

const run = promisify(execFile);
const unit = join(repoRoot, 'systemd/mpprov-observe.service');
const agentUnit = join(repoRoot, 'systemd/mpprov.service');

/** `KEY=value` lines of a unit file, every value of a key in order. */
async function settings(file: string): Promise<Map<string, string[]>> {
  const found = new Map<string, string[]>();
  for (const line of (await readFile(file, 'utf8')).split('\n')) {
    const m = /^([A-Za-z]+)=(.*)$/.exec(line);
    if (m !== null) found.set(m[1] ?? '', [...(found.get(m[1] ?? '') ?? []), m[2] ?? '']);
  }
  return found;
}

/** The sandbox of mpprov.service that the receiver keeps as it is. */
const MIRRORED = [
  'NoNewPrivileges',
  'ProtectSystem',
  'StateDirectory',
  'StateDirectoryMode',
  'ProtectHome',
  'PrivateTmp',
  'PrivateDevices',
  'UMask',
  'ProtectKernelTunables',
  'ProtectKernelModules',
  'ProtectKernelLogs',
  'ProtectControlGroups',
  'ProtectClock',
  'ProtectProc',
  'RestrictNamespaces',
  'RestrictSUIDSGID',
  'LockPersonality',
  'MemoryDenyWriteExecute',
  'SystemCallFilter',
  'SystemCallArchitectures',
] as const;

describe('systemd/mpprov-observe.service', () => {
  it('runs mpprov observe with the agent hardening, no capability, no netlink, and passes systemd-analyze verify', async () => {
    const observe = await settings(unit);
    const agent = await settings(agentUnit);
    expect(observe.get('ExecStart')).toEqual([
      '/usr/bin/node /usr/local/lib/mpprov/dist/cli/main.js observe --agent-config /etc/mpprov/agent.yaml',
    ]);
    for (const key of MIRRORED) expect([key, observe.get(key)]).toEqual([key, agent.get(key)]);
    expect(observe.get('CapabilityBoundingSet')).toEqual(['']);
    expect(observe.get('RestrictAddressFamilies')).toEqual(['AF_UNIX AF_INET AF_INET6']);
    await run('systemd-analyze', ['verify', '--man=no', unit]);
  });
});
