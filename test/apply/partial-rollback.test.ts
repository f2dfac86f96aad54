import { writeFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { activeInterface } from '../support/device-observations.js';
import { useSimulators } from '../support/simulator-fixture.js';
import { PROFILE_DEVICE, stickHead, stickWithConfig, testAgentConfig } from '../support/stick-workspace.js';
import { applyFile } from './apply-helpers.js';
import { usePeapPort } from '../support/switch-ports.js';

/**
 * A roll-back that cannot put everything back says, per stanza, what the device holds now and what
 * the technician must check. The device never returns a stanza's 802.1X password, so a stanza that
 * had one before this run keeps this stick's settings.
 */

const peapPort = usePeapPort();
const { start } = useSimulators(PROFILE_DEVICE);

const WRONG = 'partial-SeCrEt-wrong';
const stick = (password: string, extra: { anonymous?: boolean; nameserver?: string } = {}) => `    interfaces:
      eth1:
        ipv4: { method: dhcp }
        dot1x: { eap: peap, inner: mschapv2, identity: mp01@corp.example, password: "${password}"${extra.anonymous === true ? ', anonymous_identity: anonymous@corp.example' : ''}, ca_cert: certs/radius-ca.pem }
      eth1.100:
        vlan: { link: eth1, id: 100 }
        ipv4: { method: dhcp${extra.nameserver === undefined ? '' : `, nameservers: [${extra.nameserver}]`} }
`;

/** A device whose eth1 runs PEAP with the right password and a VLAN without 802.1X, and the file and agent that made it. */
async function authorizedDevice() {
  const device = await start({ switchPorts: { eth1: peapPort.profile } });
  const agent = testAgentConfig();
  const file = stickWithConfig(stickHead(device, stick('example-peap-password')));
  expect((await applyFile(file, { agent })).result.devices[0]?.message).toBe('applied and verified: 2 stanza(s) added');
  return { device, agent, file };
}

describe('a partial roll-back', () => {
  it('after a refused port: eth1 keeps the NEW (refused) settings and carries no traffic, the VLAN is back', async () => {
    const { device, agent, file } = await authorizedDevice();
    writeFileSync(file, stickHead(device, stick(WRONG, { nameserver: '198.51.100.53' })));
    const { result } = await applyFile(file, { agent });
    const mp = result.devices[0];
    expect(mp?.outcome).toBe('failed');
    expect(mp?.rollback?.outcome).toBe('partial');
    const kept =
      'eth1 inet keeps the NEW settings from this stick (the device does not return the previous 802.1X password, so it could not be restored): ' +
      'the switch port did not authorize them, so eth1 carries no traffic until the stick is corrected and run again (or its previous settings are entered on the device by hand)';
    expect(mp?.rollback?.message).toBe(
      `rolled back only in part: ${kept}; the rest was rolled back and verified (eth1.100 inet back to its previous settings)`,
    );
    expect(mp?.rollback?.stanzas).toEqual([
      {
        stanza: 'eth1 inet',
        holds: 'new',
        // eslint-disable-next-line @typescript-eslint/no-unsafe-assignment -- vitest types its asymmetric matchers as any
        check: expect.stringMatching(/^the switch port did not authorize them/),
        says: kept,
      },
      { stanza: 'eth1.100 inet', holds: 'previous', says: 'eth1.100 inet back to its previous settings' },
    ]);
    expect(mp?.message).toMatch(
      /^the switch port did not authorize the 802\.1X of eth1: .*; rolled back only in part: eth1 inet keeps the NEW settings/,
    );
    // What the device runs now is what the report says: the VLAN as before, eth1 refused.
    const vlan = activeInterface(device, 'eth1.100') as { families: { inet: Record<string, unknown> } };
    expect(vlan.families.inet['dns_nameservers']).toBeUndefined();
    expect(device.state().dot1x['eth1']?.state).toBe('unauthorized');
    expect(JSON.stringify(result)).not.toContain(WRONG);
  }, 60_000);

  it('after another wrong result: eth1 keeps the NEW settings, which the port accepted; check that it does', async () => {
    const { device, agent, file } = await authorizedDevice();
    writeFileSync(
      file,
      stickHead(device, stick('example-peap-password', { anonymous: true, nameserver: '198.51.100.53' })),
    );
    device.setFaults(['drop-field=dns_nameservers,times=1']);
    const { result } = await applyFile(file, { agent });
    const mp = result.devices[0];
    expect(mp?.rollback?.outcome).toBe('partial');
    expect(mp?.rollback?.message).toBe(
      'rolled back only in part: eth1 inet keeps the NEW settings from this stick (the device does not return the previous 802.1X password, so it could not be restored): ' +
        'check that the switch port accepts them; the rest was rolled back and verified (eth1.100 inet back to its previous settings)',
    );
    const eth1 = activeInterface(device, 'eth1') as { families: { inet: Record<string, unknown> } };
    expect(eth1.families.inet['wpa_anonymous_identity']).toBe('anonymous@corp.example');
  }, 60_000);

  it('that could restore everything says so in one sentence', async () => {
    const device = await start({ switchPorts: { eth1: peapPort.profile } });
    const { result } = await applyFile(stickWithConfig(stickHead(device, stick(WRONG))));
    expect(result.devices[0]?.rollback).toEqual({
      outcome: 'restored',
      message: 'rolled back: the device runs its previous configuration again (verified)',
      stanzas: [
        { stanza: 'eth1 inet', holds: 'none', says: 'eth1 inet removed again (new in this run)' },
        { stanza: 'eth1.100 inet', holds: 'none', says: 'eth1.100 inet removed again (new in this run)' },
      ],
    });
    expect(device.state().interfaces.active.map((i) => i.name)).toEqual(['eth0']);
  }, 60_000);
});
