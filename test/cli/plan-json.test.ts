import { describe, expect, it } from 'vitest';
import { runCli } from '../support/run-cli.js';
import { useSimulators } from '../support/simulator-fixture.js';
import {
  PROFILE_ADMIN_PASSWORD,
  PROFILE_DEVICE,
  stateDir,
  stickFromProfile,
  stickHead,
  stickWithConfig,
  type StickTarget,
} from '../support/stick-workspace.js';

/**
 * `plan --json`'s structured diff (the 'plan' event's `diff` and `aclDiff`), the contract the
 * Ansible module's --diff reads: per stanza that changes, before and after, secrets as marks only.
 * One device taken through a create, an update (address and PEAP password), an unchanged secret
 * and a delete; every byte printed is searched for the secrets.
 */
const { start } = useSimulators(PROFILE_DEVICE);
const engineArgs = (state: string) => ['--agent-config', '/nonexistent/agent.yaml', '--state-dir', state];

const FIRST_PASSWORD = 'Peap-First-7310-qwe';
const SECOND_PASSWORD = 'Peap-Second-5529-rty';

function stick(device: StickTarget, address: string, password: string, ipv6: boolean): string {
  return stickHead(
    device,
    [
      '    interfaces:',
      '      eth1:',
      `        ipv4: { method: static, address: ${address}/24, gateway: 192.0.2.1 }`,
      ...(ipv6 ? ['        ipv6: { method: static, address: 2001:db8:20::20/64 }'] : []),
      `        dot1x: { eap: peap, inner: mschapv2, identity: mp01@corp.example, password: "${password}" }`,
      '',
    ].join('\n'),
  );
}

interface PlanEvent {
  type: 'plan';
  device: string;
  diff: unknown[];
  aclDiff: unknown[];
}

/** The one 'plan' event of a one-device `plan --json`. */
function planEvent(stdout: string): PlanEvent {
  const lines = stdout
    .trim()
    .split('\n')
    .map((l) => JSON.parse(l) as { type: string });
  const plans = lines.filter((l): l is PlanEvent => l.type === 'plan');
  expect(plans).toHaveLength(1);
  return plans[0] as PlanEvent;
}

/** What compareStanza and the device agree on for the stick's 802.1X block (interface-level: in both families). */
const PEAP = {
  wpa_key_mgmt: 'IEEE8021X',
  wpa_eap: 'PEAP',
  wpa_phase1: 'peapver=0',
  wpa_phase2: 'auth=MSCHAPV2',
  wpa_identity: 'mp01@corp.example',
};

describe('plan --json: the diff per stanza', () => {
  it('create, update (address and PEAP password), unchanged secret, delete: exact entries, no secret anywhere', async () => {
    const device = await start();
    const state = stateDir();
    const outputs: string[] = [];
    const plan = async (file: string, expectedCode: number): Promise<PlanEvent> => {
      const run = await runCli(['plan', file, '--json', ...engineArgs(state)]);
      outputs.push(run.stdout, run.stderr);
      expect(run.stderr).toBe('');
      expect(run.code).toBe(expectedCode);
      return planEvent(run.stdout);
    };
    const apply = async (file: string): Promise<void> => {
      const run = await runCli(['apply', file, '--json', ...engineArgs(state)]);
      outputs.push(run.stdout, run.stderr);
      expect(run.code).toBe(0);
    };

    // Create: no before; every field, the password as "(changed)".
    const first = stickWithConfig(stick(device, '192.0.2.10', FIRST_PASSWORD, true));
    const created = await plan(first, 2);
    expect(created.diff).toEqual([
      {
        stanza: 'eth1',
        family: 'inet',
        action: 'create',
        before: null,
        after: {
          method: 'static',
          address: '192.0.2.10',
          netmask: '255.255.255.0',
          gateway: '192.0.2.1',
          ...PEAP,
          wpa_password: '(changed)',
        },
      },
      {
        stanza: 'eth1',
        family: 'inet6',
        action: 'create',
        before: null,
        after: { method: 'static', address: '2001:db8:20::20', netmask: '64', ...PEAP, wpa_password: '(changed)' },
      },
    ]);
    expect(created.aclDiff).toEqual([]);
    await apply(first);
    device.clearRequests();

    // Update: the address and the password; the password is a mark on both sides.
    const changed = await plan(stickWithConfig(stick(device, '192.0.2.20', SECOND_PASSWORD, true)), 2);
    expect(changed.diff).toEqual([
      {
        stanza: 'eth1',
        family: 'inet',
        action: 'update',
        before: { address: '192.0.2.10', wpa_password: '(changed)' },
        after: { address: '192.0.2.20', wpa_password: '(changed)' },
      },
      {
        stanza: 'eth1',
        family: 'inet6',
        action: 'update',
        before: { wpa_password: '(changed)' },
        after: { wpa_password: '(changed)' },
      },
    ]);

    // Only the address: the password is sent with the stanza, the same as last applied.
    const sameSecret = await plan(stickWithConfig(stick(device, '192.0.2.20', FIRST_PASSWORD, true)), 2);
    expect(sameSecret.diff).toEqual([
      {
        stanza: 'eth1',
        family: 'inet',
        action: 'update',
        before: { address: '192.0.2.10', wpa_password: '(unchanged)' },
        after: { address: '192.0.2.20', wpa_password: '(unchanged)' },
      },
    ]);

    // Delete: every field the device shows, the password only as "(set)" (the device says it holds one).
    const deleted = await plan(stickWithConfig(stick(device, '192.0.2.10', FIRST_PASSWORD, false)), 2);
    expect(deleted.diff).toEqual([
      {
        stanza: 'eth1',
        family: 'inet6',
        action: 'delete',
        before: { method: 'static', address: '2001:db8:20::20', netmask: '64', ...PEAP, wpa_password: '(set)' },
        after: null,
      },
    ]);

    // The same file as applied: nothing changes, an empty diff.
    expect((await plan(first, 0)).diff).toEqual([]);
    // The plans after the apply sent nothing that changes; every byte printed is free of every secret.
    expect(device.requests().length).toBeGreaterThan(0);
    expect(device.requests().filter((r) => r.method !== 'GET')).toEqual([]);
    const everything = outputs.join('\n');
    expect(everything).toContain('"type":"plan"');
    for (const secret of [FIRST_PASSWORD, SECOND_PASSWORD, PROFILE_ADMIN_PASSWORD])
      expect(everything).not.toContain(secret);
  });

  it('ACL rules the file adds are in aclDiff, as the Admin API takes them', async () => {
    const device = await start();
    const run = await runCli(['plan', stickFromProfile('acl.yaml', device.url), '--json', ...engineArgs(stateDir())]);
    expect(run.code).toBe(2);
    const event = planEvent(run.stdout);
    expect(event.diff).toEqual([]);
    expect(event.aclDiff).toEqual([
      {
        acl: {
          action: 'permit',
          protocol: 'tcp',
          from_port: 443,
          to_port: 443,
          source_addresses: ['10.0.0.0/8'],
          interfaces: ['eth0'],
        },
        action: 'create',
      },
      {
        acl: {
          action: 'permit',
          protocol: 'tcp',
          from_port: 8443,
          to_port: 8443,
          source_addresses: ['10.0.0.0/8', '2001:db8::/32'],
          interfaces: ['eth0', 'eth1'],
        },
        action: 'create',
      },
      {
        acl: {
          action: 'permit',
          protocol: 'udp',
          from_port: 5000,
          to_port: 5100,
          source_addresses: ['0.0.0.0/0'],
          interfaces: ['eth1'],
        },
        action: 'create',
      },
    ]);
    expect(device.requests().filter((r) => r.method !== 'GET')).toEqual([]);
  });
});
