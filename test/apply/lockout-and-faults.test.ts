import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { loadAuthenticatorProfile, type SimulatorHandle } from '../../src/simulator/index.js';
import { applyFile } from './apply-helpers.js';
import { writeSequence } from '../support/device-observations.js';
import { useSimulators } from '../support/simulator-fixture.js';
import { PROFILE_DEVICE, stickHead, stickWithConfig, testAgentConfig } from '../support/stick-workspace.js';

const switchProfile = fileURLToPath(new URL('../fixtures/switch/peap-port.yaml', import.meta.url));
const { start: startProfileDevice } = useSimulators(PROFILE_DEVICE);
let device: SimulatorHandle | undefined;

const eth0Peap = (password: string, extra = '') => `${extra}    interfaces:
      eth0:
        ipv4: { method: dhcp }
        dot1x: { eap: peap, inner: mschapv2, identity: mp01@corp.example, password: "${password}", ca_cert: certs/radius-ca.pem }
`;

describe('lockout guard', () => {
  it('refuses to change 802.1X on the interface it talks through, before any change', async () => {
    device = await startProfileDevice({ switchPorts: { eth0: await loadAuthenticatorProfile(switchProfile) } });
    const { result } = await applyFile(stickWithConfig(stickHead(device, eth0Peap('lockout-SeCrEt-wrong'))));
    expect(result.outcome).toBe('failed');
    expect(result.devices[0]?.code).toBe('MPPROV_PLAN_REFUSED');
    expect(result.devices[0]?.message).toBe(
      'refused before any change: this changes the 802.1X of eth0, the interface mpprov reaches the device through; ' +
        'if the switch port or network does not accept the new settings the device drops off the network until someone fixes it on site ' +
        '(set allow_disconnect: true in the file, or pass --allow-disconnect, if that is intended)',
    );
    expect(writeSequence(device)).toEqual([]);
  });

  it('with allow_disconnect, applies, loses the device, and says where to look', async () => {
    device = await startProfileDevice({ switchPorts: { eth0: await loadAuthenticatorProfile(switchProfile) } });
    const file = stickWithConfig(stickHead(device, eth0Peap('lockout-SeCrEt-wrong', '    allow_disconnect: true\n')));
    const { result } = await applyFile(file, { restartTimeoutMs: 2_000 });
    const mp = result.devices[0];
    expect(mp?.outcome).toBe('failed');
    expect(mp?.deviceLost).toBe(true);
    expect(mp?.message).toBe(
      "the device did not answer again within 2 s after the networking restart (no answer for 2 s); on site, check the link and switch-port lights, whether the switch port demands 802.1X and accepted the credentials (switch or RADIUS log), and the MP's console",
    );
    expect(mp?.lastSucceededStep).toBe('check the pending view holds 1 stanza change(s)');
    expect(device.state().lockout_reason).toBeTruthy();
    expect(JSON.stringify(result)).not.toContain('lockout-SeCrEt-wrong');
  });

  it('with the right password on a demanding port, applies and verifies the port authorized it (an address on eth0)', async () => {
    device = await startProfileDevice({ switchPorts: { eth0: await loadAuthenticatorProfile(switchProfile) } });
    const file = stickWithConfig(stickHead(device, eth0Peap('example-peap-password', '    allow_disconnect: true\n')));
    const { result } = await applyFile(file);
    expect(result.devices[0]?.message).toMatch(/^applied and verified/);
    expect(device.state().dot1x.eth0?.state).toBe('authorized');
  });
});

const dhcpEth1 =
  '    interfaces:\n      eth1:\n        ipv4: { method: static, address: 198.51.100.20/24, gateway: 198.51.100.1, nameservers: [198.51.100.53] }\n';

describe('faults end with a sentence a technician understands', () => {
  it('wrong admin password', async () => {
    device = await startProfileDevice({ password: 'another-admin-password' });
    const { result } = await applyFile(stickWithConfig(stickHead(device, dhcpEth1)));
    expect(result.devices[0]?.code).toBe('MPPROV_DEVICE_AUTH');
    expect(result.devices[0]?.message).toBe(`bad credentials for admin at ${device.url}`);
  });

  it('wrong pin shows both fingerprints and sends no credentials', async () => {
    device = await startProfileDevice();
    const wrongPin = 'AA:'.repeat(31) + 'AA';
    const stick = stickHead(device, dhcpEth1).replace(device.fingerprintSha256, wrongPin);
    const { result } = await applyFile(stickWithConfig(stick));
    expect(result.devices[0]?.code).toBe('MPPROV_DEVICE_PIN_MISMATCH');
    expect(result.devices[0]?.message).toContain(device.fingerprintSha256);
    expect(result.devices[0]?.message).toContain(wrongPin);
    expect(device.requests()).toEqual([]);
  });

  it('500 answers', async () => {
    device = await startProfileDevice({ faults: ['error=1@POST /api/v1/interface/'] });
    const { result } = await applyFile(stickWithConfig(stickHead(device, dhcpEth1)));
    expect(result.devices[0]?.code).toBe('MPPROV_DEVICE_HTTP');
    expect(result.devices[0]?.message).toBe(
      'POST eth1 inet (create) failed: the device failed internally on POST /interface/ (eth1 inet) (HTTP 500): Internal server error (injected fault).',
    );
    expect(device.state().restarts).toBe(0);
  });

  it('slow answers past the request deadline', async () => {
    device = await startProfileDevice({ faults: ['latency=3s@GET /api/v1/interface/'] });
    const { result } = await applyFile(stickWithConfig(stickHead(device, dhcpEth1)), {
      agent: testAgentConfig({ requestTimeoutMs: 500 }),
    });
    expect(result.devices[0]?.code).toBe('MPPROV_DEVICE_TIMEOUT');
    expect(result.devices[0]?.message).toBe('GET /interface/?config_state=active timed out after 0.5 s');
  });

  it('dropped connections', async () => {
    device = await startProfileDevice({ faults: ['drop=1@POST /api/v1/interface/'] });
    const { result } = await applyFile(stickWithConfig(stickHead(device, dhcpEth1)));
    expect(result.devices[0]?.code).toBe('MPPROV_DEVICE_UNREACHABLE');
    expect(result.devices[0]?.message).toBe(
      `POST eth1 inet (create) failed: lost the connection to ${device.url} during POST /interface/ (eth1 inet): the device closed the connection; the device may or may not have applied it`,
    );
  });

  it('a restart longer than the timeout', async () => {
    device = await startProfileDevice({ faults: ['restart-delay=4s'] });
    const { result } = await applyFile(stickWithConfig(stickHead(device, dhcpEth1)), { restartTimeoutMs: 1_000 });
    expect(result.devices[0]?.deviceLost).toBe(true);
    expect(result.devices[0]?.message).toMatch(
      /^the device did not answer again within 1 s after the networking restart/,
    );
  });

  it('pending that never becomes active', async () => {
    device = await startProfileDevice({ faults: ['pending-stuck'] });
    const { result } = await applyFile(stickWithConfig(stickHead(device, dhcpEth1)));
    expect(result.devices[0]?.message).toBe(
      'the networking restart did not make the changes active (they are still pending): eth1 inet is missing; a reboot of the MP may be needed',
    );
  });

  it('a wrong active configuration is rolled back and the roll-back verified', async () => {
    device = await startProfileDevice();
    const agent = testAgentConfig();
    const file = stickWithConfig(stickHead(device, dhcpEth1));
    expect((await applyFile(file, { agent })).result.outcome).toBe('changed');
    const before = JSON.stringify(device.state().interfaces.active);

    const { writeFileSync } = await import('node:fs');
    writeFileSync(file, stickHead(device, dhcpEth1.replace('198.51.100.53', '198.51.100.99')));
    device.setFaults(['drop-field=dns_nameservers,times=1']);
    const { result } = await applyFile(file, { agent });
    const mp = result.devices[0];
    expect(mp?.outcome).toBe('failed');
    expect(mp?.rollback?.outcome).toBe('restored');
    expect(mp?.message).toBe(
      'after the restart the device runs a different configuration than requested: eth1 inet: dns_nameservers is (none), expected ["198.51.100.99"]; ' +
        'rolled back: the device runs its previous configuration again (verified)',
    );
    expect(JSON.stringify(device.state().interfaces.active)).toBe(before);
  });
});

describe('802.1X refused by the switch port on a network port', () => {
  it('is a wrong result: rolled back to the previous configuration and verified', async () => {
    device = await startProfileDevice({ switchPorts: { eth1: await loadAuthenticatorProfile(switchProfile) } });
    const file = stickWithConfig(
      stickHead(
        device,
        '    interfaces:\n      eth1:\n        ipv4: { method: dhcp }\n        dot1x: { eap: md5, identity: mp01, password: "md5-SeCrEt-wrong" }\n',
      ),
    );
    const { result } = await applyFile(file);
    const mp = result.devices[0];
    expect(mp?.rollback?.outcome).toBe('restored');
    // The device shows the model's view only: no authorization state, so the verdict comes from the
    // address eth1 never got.
    expect(device.showDot1xState).toBe(false);
    expect(mp?.outcome).toBe('failed');
    expect(mp?.message).toBe(
      'the switch port did not authorize the 802.1X of eth1: eth1 inet got no address within 2 s after the restart (an interface whose 802.1X is refused carries no traffic). ' +
        'Likely causes, most likely first: (1) the password is not the one the RADIUS server holds for "mp01"; (2) the RADIUS server does not know the identity "mp01"; ' +
        '(3) or it was authorized but nothing on that network hands out addresses (no DHCP server or router advertisement); ' +
        'rolled back: the device runs its previous configuration again (verified)',
    );
    expect(device.state().interfaces.active.find((i) => i.name === 'eth1')).toBeUndefined();
  });
});

describe('a restart that keeps the old configuration with an outage too short to see', () => {
  it('is reported as still pending, not as a lost device, also with a short restart timeout', async () => {
    // 1 ms of outage falls between two probes (50 ms apart): every answer shows the unchanged view.
    device = await startProfileDevice({ restartMs: 1, faults: ['pending-stuck'] });
    const { result } = await applyFile(stickWithConfig(stickHead(device, dhcpEth1)), { restartTimeoutMs: 3_000 });
    expect(result.devices[0]?.deviceLost).toBeUndefined();
    expect(result.devices[0]?.message).toBe(
      'the networking restart did not make the changes active (they are still pending): eth1 inet is missing; a reboot of the MP may be needed',
    );
    expect(device.state().restarts).toBe(1);
  });
});
