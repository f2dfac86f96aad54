import { writeFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import type { DeviceResult } from '../../src/apply/index.js';
import { createAdminClient } from '../../src/client/index.js';
import { Secret } from '../../src/core/secret.js';
import { concludeJob, createEventFormatter } from '../../src/report/index.js';
import { type SimulatorHandle } from '../../src/simulator/index.js';
import { activeInterface } from '../support/device-observations.js';
import { useSimulators } from '../support/simulator-fixture.js';
import {
  PROFILE_ADMIN_PASSWORD,
  PROFILE_DEVICE,
  stickHead,
  stickWithConfig,
  testAgentConfig,
} from '../support/stick-workspace.js';
import { applyFile } from './apply-helpers.js';
import { usePeapPort } from '../support/switch-ports.js';

/**
 * 802.1X judged the way the model lets a client judge it: by the address a dhcp stanza gets after
 * the restart, never by a field beyond the model. Against the simulator in its default (model)
 * view, and the same verdicts when it is started with its rehearsal aid `dot1x_state` shown.
 */

const peapPort = usePeapPort();
const { start } = useSimulators(PROFILE_DEVICE);

const RIGHT = 'example-peap-password';
const WRONG = 'verdict-SeCrEt-wrong';
const peap = (password: string) =>
  `dot1x: { eap: peap, inner: mschapv2, identity: mp01@corp.example, password: "${password}", ca_cert: certs/radius-ca.pem }`;
const eth1 = (ipv4: string, password: string) =>
  `    interfaces:\n      eth1:\n        ipv4: ${ipv4}\n        ${peap(password)}\n`;
const DHCP = '{ method: dhcp }';
const STATIC = '{ method: static, address: 198.51.100.20/24, gateway: 198.51.100.1 }';

const NOT_VISIBLE =
  'eth1 inet: applied; 802.1X authorization is not visible through the Admin API (a static address looks the same whether or not the switch port authorized it): ' +
  'check on the switch port side (or in the RADIUS log) that it did';
const REFUSED =
  'the switch port did not authorize the 802.1X of eth1: eth1 inet got no address within 2 s after the restart (an interface whose 802.1X is refused carries no traffic). ' +
  'Likely causes, most likely first: (1) the password is not the one the RADIUS server holds for "mp01@corp.example"; ' +
  '(2) the RADIUS server does not know the identity "mp01@corp.example"; ' +
  "(3) the RADIUS server's certificate is not issued by ca_cert (certs/radius-ca.pem), so the Monitoring Point refuses the server; " +
  '(4) or it was authorized but nothing on that network hands out addresses (no DHCP server or router advertisement); ' +
  'rolled back: the device runs its previous configuration again (verified)';

interface Case {
  name: string;
  config: string;
  /** What the device's own state (control port) says the port did: the product must not need it. */
  port: 'authorized' | 'unauthorized';
  verdict: Verdict;
}

interface Verdict {
  outcome: string;
  message: string;
  warnings: string[];
  dot1xNotVisible: string[] | undefined;
  rollback: string | undefined;
}

/** A static 802.1X stanza: the same verdict whether the port accepted it or not (that is the point). */
const STATIC_NOT_VISIBLE = {
  outcome: 'changed',
  message:
    'applied: 1 stanza(s) added; the settings are active as requested, but the 802.1X authorization of eth1 inet is not visible through the Admin API (static address)',
  warnings: [NOT_VISIBLE],
  dot1xNotVisible: ['eth1 inet'],
  rollback: undefined,
};

const CASES: Case[] = [
  {
    name: 'dhcp, right password: authorized and verified',
    config: eth1(DHCP, RIGHT),
    port: 'authorized',
    verdict: {
      outcome: 'changed',
      message: 'applied and verified: 1 stanza(s) added',
      warnings: [],
      dot1xNotVisible: undefined,
      rollback: undefined,
    },
  },
  {
    name: 'dhcp, wrong password: refused, rolled back',
    config: eth1(DHCP, WRONG),
    port: 'unauthorized',
    verdict: { outcome: 'failed', message: REFUSED, warnings: [], dot1xNotVisible: undefined, rollback: 'restored' },
  },
  {
    name: 'static, right password: applied, authorization not visible',
    config: eth1(STATIC, RIGHT),
    port: 'authorized',
    verdict: STATIC_NOT_VISIBLE,
  },
  {
    // The honest limit: a refused static port looks like an accepted one through the Admin API.
    name: 'static, wrong password: the same "not visible", never "verified"',
    config: eth1(STATIC, WRONG),
    port: 'unauthorized',
    verdict: STATIC_NOT_VISIBLE,
  },
];

function verdictOf(result: DeviceResult | undefined): Verdict {
  return {
    outcome: result?.outcome ?? '(none)',
    message: result?.message ?? '(none)',
    warnings: result?.warnings ?? [],
    dot1xNotVisible: result?.dot1xNotVisible,
    rollback: result?.rollback?.outcome,
  };
}

/** The active view of eth1 as the product's own client reads it, rehearsal aids included. */
async function eth1AsTheClientSeesIt(device: SimulatorHandle): Promise<Record<string, unknown> | undefined> {
  const api = createAdminClient({
    url: device.url,
    username: 'admin',
    password: new Secret(PROFILE_ADMIN_PASSWORD),
    trust: { kind: 'fingerprint', sha256: device.fingerprintSha256 },
  });
  try {
    return (await api.listInterfaces('active')).find((i) => i.name === 'eth1')?.extra;
  } finally {
    await api.close();
  }
}

describe("the same 802.1X verdicts with and without the simulator's dot1x_state", () => {
  it.each(CASES.map((c) => [c.name, c] as const))(
    '%s',
    async (_name, c) => {
      const verdicts: Verdict[] = [];
      for (const showDot1xState of [false, true]) {
        const device = await start({ switchPorts: { eth1: peapPort.profile }, showDot1xState });
        const { result } = await applyFile(stickWithConfig(stickHead(device, c.config)));
        verdicts.push(verdictOf(result.devices[0]));
        // The port did what the case says (the device's own record, beyond the API)...
        expect(device.state().dot1x['eth1']?.state ?? 'unauthorized').toBe(c.port);
        if (c.verdict.rollback === undefined) {
          // ...and the API showed dot1x_state exactly when asked to, so the comparison is not vacuous.
          const extra = await eth1AsTheClientSeesIt(device);
          expect(extra?.['dot1x_state']).toBe(showDot1xState ? c.port : undefined);
        }
        await device.close();
      }
      expect(verdicts[0]).toEqual(c.verdict);
      expect(verdicts[1]).toEqual(verdicts[0]);
      expect(JSON.stringify(verdicts)).not.toContain(WRONG);
    },
    60_000,
  );
});

describe('a static 802.1X stanza in every output', () => {
  it('is a warning event, a warning of the result, a usb.log warning line, and its RESULT line never says verified', async () => {
    const device = await start({ switchPorts: { eth1: peapPort.profile } });
    const { result, events } = await applyFile(stickWithConfig(stickHead(device, eth1(STATIC, RIGHT))));
    expect(events.filter((e) => e.type === 'warning').map((e) => (e.type === 'warning' ? e.message : ''))).toEqual([
      NOT_VISIBLE,
    ]);
    expect(result.devices[0]?.warnings).toEqual([NOT_VISIBLE]);

    // usb.log: the daemon's job log writes the engine's events through this formatter.
    const format = createEventFormatter();
    const lines = events.flatMap((e) => format(e)).map((l) => `${l.level} ${l.text}`);
    expect(lines).toContain(`warn [mp1] warning: ${NOT_VISIBLE}`);
    expect(lines.filter((l) => l.includes('verified'))).toEqual([]);
    const conclusion = concludeJob({ result, configName: 'mpprov.yaml', stopped: false });
    expect(conclusion).toEqual({
      word: 'CHANGED',
      summary:
        'mp1: changed, 802.1X authorization of eth1 inet not visible through the Admin API (check the switch port)',
    });
  });
});

describe('dual-stack interface-level changes', () => {
  const dualStack = (mtu: number, dot1x: string) =>
    `    interfaces:\n      eth1:\n        ipv4: { method: dhcp }\n        ipv6: { method: auto }\n        link: { mtu: ${mtu} }\n${dot1x}`;

  it('post one stanza per family and verify both, the mtu and the 802.1X alike', async () => {
    const device = await start({ switchPorts: { eth1: peapPort.profile } });
    const file = stickWithConfig(stickHead(device, dualStack(1500, `        ${peap(RIGHT)}\n`)));
    const agent = testAgentConfig();
    const first = await applyFile(file, { agent });
    expect(first.result.devices[0]?.message).toBe('applied and verified: 2 stanza(s) added');

    writeFileSync(file, stickHead(device, dualStack(9000, `        ${peap(RIGHT)}\n`)));
    device.clearRequests();
    const second = await applyFile(file, { agent });
    expect(second.result.devices[0]?.message).toBe('applied and verified: 2 changed');
    const posted = device
      .requests()
      .filter((r) => r.method === 'POST')
      .map((r) => r.body as Record<string, unknown>);
    expect(posted.map((b) => [b['family'], b['mtu'], b['wpa_eap']])).toEqual([
      ['inet', 9000, 'PEAP'],
      ['inet6', 9000, 'PEAP'],
    ]);
    const active = activeInterface(device, 'eth1') as { families: Record<string, Record<string, unknown>> };
    expect([active.families['inet']?.['mtu'], active.families['inet6']?.['mtu']]).toEqual([9000, 9000]);
  }, 60_000);

  it('a refused dual-stack port: both stanzas named, neither got an address', async () => {
    const device = await start({ switchPorts: { eth1: peapPort.profile } });
    const { result } = await applyFile(stickWithConfig(stickHead(device, dualStack(1500, `        ${peap(WRONG)}\n`))));
    expect(result.devices[0]?.outcome).toBe('failed');
    expect(result.devices[0]?.message).toMatch(
      /^the switch port did not authorize the 802\.1X of eth1: eth1 inet and eth1 inet6 got no address within 2 s after the restart/,
    );
    expect(result.devices[0]?.rollback?.outcome).toBe('restored');
  }, 60_000);
});

describe('shutting down during the grace period', () => {
  it('stops waiting at once, rolls nothing back, and says what to check', async () => {
    const device = await start({ switchPorts: { eth1: peapPort.profile } });
    const abort = new AbortController();
    const started = Date.now();
    const { result } = await applyFile(stickWithConfig(stickHead(device, eth1(DHCP, WRONG))), {
      dot1xGraceMs: 30_000,
      signal: abort.signal,
      onEvent: (event) => {
        if (event.type === 'waiting' && event.reason.startsWith('802.1X on eth1: up to 30 s')) abort.abort();
      },
    });
    expect(Date.now() - started).toBeLessThan(15_000);
    const mp = result.devices[0];
    expect(mp?.message).toBe(
      'stopped waiting for the 802.1X of eth1 to be authorized because the agent is shutting down; the new settings are active: check that the interface got an address when the agent runs again',
    );
    expect(mp?.rollback).toBeUndefined();
    expect(device.state().restarts).toBe(1);
  }, 60_000);
});
