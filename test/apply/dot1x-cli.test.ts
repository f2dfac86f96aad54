import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { runCli } from '../support/run-cli.js';
import { useSimulators } from '../support/simulator-fixture.js';
import { PROFILE_DEVICE, stateDir, stickHead, stickWithConfig } from '../support/stick-workspace.js';
import { tempFolder } from '../support/temp-folder.js';
import { usePeapPort } from '../support/switch-ports.js';

/**
 * `mpprov apply` as a child process against the simulator in its default (model) view: a refused
 * 802.1X port is exit 1 after the grace given by --dot1x-grace or agent.yaml; a static 802.1X
 * stanza is exit 0 with its "not visible" warning on the terminal and in --json.
 */

const peapPort = usePeapPort();
const { start } = useSimulators(PROFILE_DEVICE);

const WRONG = 'cli-SeCrEt-wrong';
const eth1 = (ipv4: string, password: string) =>
  `    interfaces:\n      eth1:\n        ipv4: ${ipv4}\n        dot1x: { eap: peap, inner: mschapv2, identity: mp01@corp.example, password: "${password}", ca_cert: certs/radius-ca.pem }\n`;
const engine = (agentConfig = '/nonexistent/agent.yaml') => ['--agent-config', agentConfig, '--state-dir', stateDir()];

function jsonLines(stdout: string): Record<string, unknown>[] {
  return stdout
    .trim()
    .split('\n')
    .map((line) => JSON.parse(line) as Record<string, unknown>);
}

describe('mpprov apply and 802.1X', () => {
  it('a refused port: exit 1 after --dot1x-grace seconds, rolled back, the interface and the likely causes named', async () => {
    const device = await start({ switchPorts: { eth1: peapPort.profile } });
    const file = stickWithConfig(stickHead(device, eth1('{ method: dhcp }', WRONG)));
    const run = await runCli(['apply', file, ...engine(), '--dot1x-grace', '1', '--json']);
    expect(run.stderr).toBe('');
    expect(run.code).toBe(1);
    const lines = jsonLines(run.stdout);
    const result = lines.at(-1) as {
      type: string;
      outcome: string;
      devices: { message: string; rollback: { outcome: string } }[];
    };
    expect(result.type).toBe('result');
    expect(result.outcome).toBe('failed');
    expect(result.devices[0]?.message).toMatch(
      /^the switch port did not authorize the 802\.1X of eth1: eth1 inet got no address within 1 s after the restart .* Likely causes, most likely first: \(1\) the password is not the one/,
    );
    expect(result.devices[0]?.rollback.outcome).toBe('restored');
    expect(
      lines.some(
        (l) =>
          l['type'] === 'waiting' &&
          String(l['reason']) ===
            '802.1X on eth1: up to 1 s for the port to authorize it (an address from the network)',
      ),
    ).toBe(true);
    expect(run.stdout).not.toContain(WRONG);
    expect(device.state().interfaces.active.map((i) => i.name)).toEqual(['eth0']);
  }, 60_000);

  it('takes the grace from agent.yaml timeouts.dot1x_s when the flag is not given', async () => {
    const device = await start({ switchPorts: { eth1: peapPort.profile } });
    const agentConfig = join(tempFolder('agent'), 'agent.yaml');
    writeFileSync(agentConfig, 'version: 1\ntimeouts: { dot1x_s: 1.5 }\n');
    const run = await runCli([
      'apply',
      stickWithConfig(stickHead(device, eth1('{ method: dhcp }', WRONG))),
      ...engine(agentConfig),
    ]);
    expect(run.code).toBe(1);
    expect(run.stdout).toContain(
      '[mp1] FAILED: the switch port did not authorize the 802.1X of eth1: eth1 inet got no address within 1.5 s after the restart',
    );
    expect(run.stdout).toContain(
      '[mp1] waiting for the device (0.0 s): 802.1X on eth1: up to 1.5 s for the port to authorize it (an address from the network)\n',
    );
    expect(run.stdout).toContain('RESULT: FAILED (mp1 failed)');
  }, 60_000);

  it('a static 802.1X stanza: exit 0, "not visible" on the terminal and in --json, never "verified"', async () => {
    const device = await start({ switchPorts: { eth1: peapPort.profile } });
    const config = eth1(
      '{ method: static, address: 198.51.100.20/24, gateway: 198.51.100.1 }',
      'example-peap-password',
    );
    const warning =
      'eth1 inet: applied; 802.1X authorization is not visible through the Admin API (a static address looks the same whether or not the switch port authorized it): ' +
      'check on the switch port side (or in the RADIUS log) that it did';

    const text = await runCli(['apply', stickWithConfig(stickHead(device, config)), ...engine()]);
    expect(text.code).toBe(0);
    expect(text.stdout).toContain(`[mp1] WARNING: ${warning}\n`);
    expect(text.stdout).toContain(
      '[mp1] CHANGED: applied: 1 stanza(s) added; the settings are active as requested, but the 802.1X authorization of eth1 inet is not visible through the Admin API (static address)\n',
    );
    expect(text.stdout).not.toContain('verified');

    const again = await start({ switchPorts: { eth1: peapPort.profile } });
    const json = await runCli(['apply', stickWithConfig(stickHead(again, config)), ...engine(), '--json']);
    expect(json.code).toBe(0);
    const lines = jsonLines(json.stdout);
    expect(lines.filter((l) => l['type'] === 'warning')).toEqual([
      { type: 'warning', device: 'mp1', message: warning },
    ]);
    const result = lines.at(-1) as { devices: { outcome: string; warnings: string[]; dot1xNotVisible: string[] }[] };
    expect(result.devices[0]).toMatchObject({
      outcome: 'changed',
      warnings: [warning],
      dot1xNotVisible: ['eth1 inet'],
    });
  }, 60_000);
});
