import { writeFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import type { SimulatorHandle } from '../../src/simulator/index.js';
import { applyFile } from './apply-helpers.js';
import { writeSequence } from '../support/device-observations.js';
import { useSimulators } from '../support/simulator-fixture.js';
import { PROFILE_DEVICE, stickHead, stickWithConfig, testAgentConfig } from '../support/stick-workspace.js';

/** The vendor's documented orders, asserted on the simulator's request log. */
const { start: startProfileDevice } = useSimulators(PROFILE_DEVICE);
let device: SimulatorHandle | undefined;

const wireless = (ssid: string) => `    interfaces:
      wlan0:
        wireless: { ssid: ${ssid}, security: wpa2-personal, passphrase: "order-SeCrEt-wifi" }
        ipv4: { method: dhcp }
`;

const peapEth1 = `    interfaces:
      eth1:
        ipv4: { method: dhcp }
        dot1x:
          eap: peap
          inner: mschapv2
          identity: mp01@corp.example
          password: "order-SeCrEt-peap"
          ca_cert: certs/radius-ca.pem
`;

describe('documented request order', () => {
  it('changes an SSID by delete, restart, add, restart', async () => {
    device = await startProfileDevice();
    const agent = testAgentConfig();
    const file = stickWithConfig(stickHead(device, wireless('CorpWiFi')));
    expect((await applyFile(file, { agent })).result.outcome).toBe('changed');
    device.clearRequests();

    writeFileSync(file, stickHead(device, wireless('NewWiFi')));
    const { result } = await applyFile(file, { agent });
    expect(result.devices[0]?.message).toMatch(/^applied and verified/);
    expect(writeSequence(device)).toEqual([
      'DELETE /api/v1/interface/wlan0/ family=inet',
      'PUT /api/v1/service/networking/',
      'POST /api/v1/interface/ wlan0 inet',
      'PUT /api/v1/service/networking/',
    ]);
    const wlan0 = device.state().interfaces.active.find((i) => i.name === 'wlan0') as {
      families: { inet: { ssid: string } };
    };
    expect(wlan0.families.inet.ssid).toBe('NewWiFi');
  });

  it('turns 802.1X off by posting the stanza again without any wpa_ field', async () => {
    device = await startProfileDevice();
    const agent = testAgentConfig();
    const file = stickWithConfig(stickHead(device, peapEth1));
    expect((await applyFile(file, { agent })).result.outcome).toBe('changed');
    device.clearRequests();

    writeFileSync(file, stickHead(device, '    interfaces:\n      eth1:\n        ipv4: { method: dhcp }\n'));
    expect((await applyFile(file, { agent })).result.outcome).toBe('changed');
    expect(writeSequence(device)).toEqual(['POST /api/v1/interface/ eth1 inet', 'PUT /api/v1/service/networking/']);
    const posted = device.requests().find((r) => r.method === 'POST')?.body as Record<string, unknown>;
    expect(Object.keys(posted).filter((k) => k.startsWith('wpa_'))).toEqual([]);
    const eth1 = device.state().interfaces.active.find((i) => i.name === 'eth1') as {
      families: { inet: Record<string, unknown> };
      dot1x_state: string;
    };
    expect(Object.keys(eth1.families.inet).filter((k) => k.startsWith('wpa_'))).toEqual([]);
    expect(eth1.dot1x_state).toBe('disabled');
  });

  it('after the restart, verifies the answer that ended the wait: the device answers one request, the probe', async () => {
    device = await startProfileDevice();
    const file = stickWithConfig(stickHead(device, '    interfaces:\n      eth1:\n        ipv4: { method: dhcp }\n'));
    const { result } = await applyFile(file, { agent: testAgentConfig() });
    expect(result.devices[0]?.message).toMatch(/^applied and verified/);
    const requests = device.requests().map((r) => `${r.method} ${r.path} ${r.query['config_state'] ?? ''}`.trim());
    const restart = requests.lastIndexOf('PUT /api/v1/service/networking/');
    expect(restart).toBeGreaterThan(0);
    // A second GET of the active view after the outage would pay a new connection and TLS
    // handshake for the answer the wait already has.
    expect(requests.slice(restart + 1)).toEqual(['GET /api/v1/interface/ active']);
  });

  it('uploads files first, then the parent with 802.1X, then its VLAN', async () => {
    device = await startProfileDevice();
    const file = stickWithConfig(
      stickHead(
        device,
        `${peapEth1}      eth1.100:
        vlan: { link: eth1, id: 100 }
        ipv4: { method: dhcp }
        dot1x: { eap: md5, identity: mp01-vlan, password: "order-SeCrEt-md5" }
`,
      ),
    );
    expect((await applyFile(file)).result.outcome).toBe('changed');
    expect(writeSequence(device)).toEqual([
      'POST /api/v1/interface/file/',
      'POST /api/v1/interface/ eth1 inet',
      'POST /api/v1/interface/ eth1.100 inet',
      'PUT /api/v1/service/networking/',
    ]);
  });

  it('refuses 802.1X on a VLAN whose parent on the device has none, before any change', async () => {
    device = await startProfileDevice();
    const file = stickWithConfig(
      stickHead(
        device,
        '    interfaces:\n      eth1.100:\n        vlan: { link: eth1, id: 100 }\n        ipv4: { method: dhcp }\n        dot1x: { eap: md5, identity: v, password: "order-SeCrEt-v" }\n',
      ),
    );
    const { result } = await applyFile(file);
    expect(result.devices[0]?.message).toBe(
      'refused before any change: 802.1X on VLAN eth1.100 needs its parent eth1 on dhcp or static with 802.1X on the device; add eth1 with its dot1x block to the file',
    );
    expect(writeSequence(device)).toEqual([]);
  });

  it('sends the PEAP-TLS second set: its files uploaded in their slots before the stanza that names them', async () => {
    device = await startProfileDevice();
    const file = stickWithConfig(
      stickHead(
        device,
        `    interfaces:
      eth1:
        ipv4: { method: dhcp }
        dot1x:
          eap: peap
          inner: tls
          identity: mp01@corp.example
          ca_cert: certs/radius-ca.pem
          inner_tls: { ca_cert: certs/radius-ca.pem, client_cert: certs/mp01-inner-cert.pem, private_key: certs/mp01-inner-key.pem }
`,
      ),
    );
    expect((await applyFile(file)).result.outcome).toBe('changed');
    expect(writeSequence(device)).toEqual([
      'POST /api/v1/interface/file/',
      'POST /api/v1/interface/ eth1 inet',
      'PUT /api/v1/service/networking/',
    ]);
    const upload = (device.requests().find((r) => r.path.endsWith('/file/'))?.body as { files: Record<string, string> })
      .files;
    expect(Object.keys(upload).sort()).toEqual(['wpa_ca_cert', 'wpa_ca_cert2', 'wpa_client_cert2', 'wpa_private_key2']);
    const posted = device.requests().find((r) => r.method === 'POST' && r.path.endsWith('/interface/'))?.body as Record<
      string,
      unknown
    >;
    expect(posted).toMatchObject({
      wpa_eap: 'PEAP',
      wpa_phase1: 'peapver=0',
      wpa_phase2: 'auth=TLS',
      wpa_ca_cert2: upload.wpa_ca_cert2,
      wpa_client_cert2: upload.wpa_client_cert2,
      wpa_private_key2: upload.wpa_private_key2,
    });
    expect(upload.wpa_client_cert2).toMatch(/^client2-[0-9a-f]{12}\.pem$/);
  });

  it('rotates a certificate: only the new files are uploaded, under new names, then one restart', async () => {
    device = await startProfileDevice();
    const agent = testAgentConfig();
    const tls = (cert: string, key: string) => `    interfaces:
      eth1:
        ipv4: { method: dhcp }
        dot1x: { eap: tls, identity: mp01, ca_cert: certs/radius-ca.pem, client_cert: certs/${cert}, private_key: certs/${key} }
`;
    const file = stickWithConfig(stickHead(device, tls('mp01-cert.pem', 'mp01-key.pem')));
    expect((await applyFile(file, { agent })).result.outcome).toBe('changed');
    device.clearRequests();

    writeFileSync(file, stickHead(device, tls('mp01-ec-cert.pem', 'mp01-ec-key.pem')));
    expect((await applyFile(file, { agent })).result.outcome).toBe('changed');
    expect(writeSequence(device)).toEqual([
      'POST /api/v1/interface/file/',
      'POST /api/v1/interface/ eth1 inet',
      'PUT /api/v1/service/networking/',
    ]);
    const upload = (device.requests().find((r) => r.path.endsWith('/file/'))?.body as { files: Record<string, string> })
      .files;
    expect(Object.keys(upload).sort()).toEqual(['wpa_client_cert', 'wpa_private_key']);

    device.clearRequests();
    expect((await applyFile(file, { agent })).result.outcome).toBe('no-change');
    expect(writeSequence(device)).toEqual([]);
  });

  describe('the VLAN 802.1X rule, both ways', () => {
    const vlanMd5 = `      eth1.100:
        vlan: { link: eth1, id: 100 }
        ipv4: { method: dhcp }
        dot1x: { eap: md5, identity: mp01-vlan, password: "order-SeCrEt-md5" }
`;
    const vlanPlain = '      eth1.100:\n        vlan: { link: eth1, id: 100 }\n        ipv4: { method: dhcp }\n';
    const eth1Plain = '    interfaces:\n      eth1:\n        ipv4: { method: dhcp }\n';

    /** A device running eth1 with PEAP and its VLAN eth1.100 with MD5, and the stick file that made it. */
    async function withVlanDot1x(): Promise<{
      sim: SimulatorHandle;
      file: string;
      agent: ReturnType<typeof testAgentConfig>;
    }> {
      const sim = await startProfileDevice();
      device = sim;
      const agent = testAgentConfig();
      const file = stickWithConfig(stickHead(sim, `${peapEth1}${vlanMd5}`));
      expect((await applyFile(file, { agent })).result.devices[0]?.message).toBe(
        'applied and verified: 2 stanza(s) added',
      );
      sim.clearRequests();
      return { sim, file, agent };
    }

    it("refuses to turn off the parent's 802.1X while the device keeps it on the VLAN, before any change", async () => {
      const { sim, file, agent } = await withVlanDot1x();
      writeFileSync(file, stickHead(sim, eth1Plain));
      const { result } = await applyFile(file, { agent });
      expect(result.devices[0]?.code).toBe('MPPROV_PLAN_REFUSED');
      expect(result.devices[0]?.message).toBe(
        'refused before any change: VLAN eth1.100 on the device keeps its 802.1X, which the device allows only while its parent eth1 is on dhcp or static with 802.1X, ' +
          'and this file leaves eth1 without it; in the same stick, turn off the 802.1X of eth1.100 (add eth1.100 to the file without a dot1x block) ' +
          'or remove eth1.100 (prune: true removes every interface the file does not name), or keep 802.1X on eth1',
      );
      expect(writeSequence(sim)).toEqual([]);
    });

    it('turns both off in one stick: the VLAN first, then the parent (the device refuses the other order)', async () => {
      const { sim, file, agent } = await withVlanDot1x();
      writeFileSync(file, stickHead(sim, `${eth1Plain}${vlanPlain}`));
      const { result } = await applyFile(file, { agent });
      expect(result.devices[0]?.message).toBe('applied and verified: 2 changed');
      expect(writeSequence(sim)).toEqual([
        'POST /api/v1/interface/ eth1.100 inet',
        'POST /api/v1/interface/ eth1 inet',
        'PUT /api/v1/service/networking/',
      ]);
    });

    it("removes the VLAN with prune and turns the parent's 802.1X off: the VLAN's DELETE first", async () => {
      const { sim, file, agent } = await withVlanDot1x();
      writeFileSync(file, stickHead(sim, `    prune: true\n${eth1Plain}      eth0:\n        ipv4: { method: dhcp }\n`));
      const { result } = await applyFile(file, { agent });
      expect(result.devices[0]?.message).toBe('applied and verified: 1 changed, 1 removed');
      expect(writeSequence(sim)).toEqual([
        'DELETE /api/v1/interface/eth1.100/ family=inet',
        'POST /api/v1/interface/ eth1 inet',
        'PUT /api/v1/service/networking/',
      ]);
      expect(
        sim
          .state()
          .interfaces.active.map((i) => i.name)
          .sort(),
      ).toEqual(['eth0', 'eth1']);
    });
  });
});
