import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { lockDevice } from '../../src/apply/device-file-lock.js';
import { runCli } from '../support/run-cli.js';
import { useSimulators } from '../support/simulator-fixture.js';
import { PEAP_PASSWORD, stateDir, stickWithConfig, stickYaml } from '../support/stick-workspace.js';

/** `--update-secrets` and `--lock-wait` on the built CLI against a simulated device over real HTTPS. */
const { start } = useSimulators();
const engine = (state: string) => ['--agent-config', '/nonexistent/agent.yaml', '--state-dir', state];

describe('mpprov apply --update-secrets', () => {
  it('on_create: a fresh state folder sends nothing to a configured device; always: resends the 802.1X password', async () => {
    const device = await start();
    const file = stickWithConfig(stickYaml([{ name: 'mp01', sim: device, dot1x: true }]));
    writeFileSync(join(file, '..', 'secrets', 'mp01.pw'), `${device.password}\n`);
    expect((await runCli(['apply', file, ...engine(stateDir())])).code).toBe(0);

    device.clearRequests();
    const fresh = await runCli(['apply', file, ...engine(stateDir()), '--update-secrets', 'on_create']);
    expect(fresh.code, fresh.stdout + fresh.stderr).toBe(0);
    expect(fresh.stdout).toContain('RESULT: NO CHANGE');
    expect(device.requests().filter((r) => r.method !== 'GET')).toEqual([]);

    const onChange = await runCli(['plan', file, ...engine(stateDir()), '--update-secrets', 'on_change']);
    expect(onChange.code).toBe(2);

    const always = await runCli(['apply', file, ...engine(stateDir()), '--update-secrets', 'always']);
    expect(always.code, always.stdout + always.stderr).toBe(0);
    expect(always.stdout).toContain('RESULT: CHANGED');
    expect(always.stdout + always.stderr).not.toContain(PEAP_PASSWORD);
  });
});

describe('mpprov apply --lock-wait', () => {
  it('a device whose lock another run holds fails in one sentence naming that run, and nothing is sent to it', async () => {
    const device = await start();
    const file = stickWithConfig(stickYaml([{ name: 'mp01', sim: device }]));
    writeFileSync(join(file, '..', 'secrets', 'mp01.pw'), `${device.password}\n`);
    const state = stateDir();
    mkdirSync(state, { recursive: true });
    // Another run holds the device's lock (its key is the address and port the URL names).
    const key = new URL(device.url).origin;
    const release = await lockDevice([key], { stateDir: state, waitMs: 0, run: 'mpprov apply other.yaml' });
    try {
      device.clearRequests();
      const run = await runCli(['apply', file, ...engine(state), '--lock-wait', '0', '--json']);
      expect(run.code).toBe(1);
      expect(run.stdout).toMatch(
        /"message":"another run holds this device's lock \(mpprov apply other\.yaml on \S+ \(pid \d+\) since [^)]+\) and did not finish within 0 s; this run sent nothing to it"/,
      );
      expect(device.requests()).toEqual([]);
    } finally {
      await release();
    }
    const after = await runCli(['apply', file, ...engine(state), '--lock-wait', '5']);
    expect(after.code, after.stdout + after.stderr).toBe(0);
  });

  it('two runs at once bringing a new 802.1X password: the device restarts once, the second run changes nothing', async () => {
    const device = await start();
    const before = stickWithConfig(stickYaml([{ name: 'mp01', sim: device, dot1x: true }]));
    writeFileSync(join(before, '..', 'secrets', 'mp01.pw'), `${device.password}\n`);
    const state = stateDir();
    expect((await runCli(['apply', before, ...engine(state)])).code).toBe(0);
    const rotated = stickWithConfig(
      stickYaml([{ name: 'mp01', sim: device, dot1x: true }]).replace(PEAP_PASSWORD, 'Rotated-Peap-Pw-2027'),
    );
    writeFileSync(join(rotated, '..', 'secrets', 'mp01.pw'), `${device.password}\n`);
    const restarts = device.state().restarts;
    const args = ['apply', rotated, ...engine(state), '--lock-wait', '60', '--update-secrets', 'on_create'];
    const [a, b] = await Promise.all([runCli(args), runCli(args)]);
    expect([a.code, b.code], a.stdout + a.stderr + b.stdout + b.stderr).toEqual([0, 0]);
    expect([a.stdout, b.stdout].map((out) => /RESULT: (CHANGED|NO CHANGE)/.exec(out)?.[1]).sort()).toEqual([
      'CHANGED',
      'NO CHANGE',
    ]);
    expect(device.state().restarts).toBe(restarts + 1);
    expect(a.stdout + a.stderr + b.stdout + b.stderr).not.toContain('Rotated-Peap-Pw-2027');
  });
});
