import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import {
  describeBuiltInModel,
  loadDeviceDescription,
  SimulatorErrorCode,
  startSimulator,
} from '../../src/simulator/index.js';
import { useLabPki } from '../support/lab-pki.js';
import { tempFolder } from '../support/temp-folder.js';
import { apiClient, interfacesOf } from './sim-client.js';

/** --model and --device FILE: ports and the starting active configuration. */

const pki = useLabPki();
const dir = tempFolder('sim-device');

async function deviceFile(name: string, text: string): Promise<string> {
  const path = join(dir, name);
  await writeFile(path, text);
  return path;
}

describe('built-in models', () => {
  it('refuses an unknown model, naming the known ones', () => {
    expect(() => describeBuiltInModel('m99')).toThrow('Unknown model "m99"; built-in models: m50, m22, m70, virtual.');
    expect(() => describeBuiltInModel('m99')).toThrow(expect.objectContaining({ code: SimulatorErrorCode.Usage }));
  });
});

describe('a device file', () => {
  it('gives the model, its ports and a starting configuration with 802.1X and files (YAML)', async () => {
    const file = await deviceFile(
      'lab.yaml',
      `model: lab-box
interfaces:
  eth0: { autoneg: true, speeds: [100, 1000], duplex: [full] }
  eth1: { autoneg: false, speeds: [1000], duplex: [full] }
  wlan0: { wireless: true }
files:
  - { slot: wpa_ca_cert, name: ca.pem, path: ${pki.path('ca.pem')} }
active:
  - { name: eth0, family: inet, method: static, address: 192.0.2.10, netmask: 255.255.255.0 }
  - { name: eth0, family: inet6, method: auto }
  - { name: eth1, family: inet, method: dhcp, wpa_key_mgmt: IEEE8021X, wpa_eap: PEAP, wpa_identity: alice, wpa_password: alicepass, wpa_phase2: auth=MSCHAPV2, wpa_ca_cert: ca.pem }
`,
    );
    const sim = await startSimulator({ device: await loadDeviceDescription(file) });
    const api = apiClient(sim);
    try {
      expect((await api.get('/appliance/capability')).body.interfaces).toEqual({
        eth0: { autoneg: true, speeds: [100, 1000], duplex: ['full'] },
        eth1: { autoneg: false, speeds: [1000], duplex: ['full'] },
        wlan0: { wireless: true },
      });
      const active = interfacesOf(await api.get('/interface/?config_state=active'));
      expect(active.map((i) => i.name)).toEqual(['eth0', 'eth1']);
      expect(active[1]?.families.inet).toMatchObject({
        wpa_eap: 'PEAP',
        wpa_password_set: true,
        wpa_ca_cert: 'ca.pem',
      });
      expect(sim.state().model).toBe('lab-box');
      expect(sim.state().files).toEqual([
        expect.objectContaining({ slot: 'wpa_ca_cert', name: 'ca.pem', state: 'active' }),
      ]);
    } finally {
      await api.close();
      await sim.close();
    }
  });

  it('may name a built-in model and keep its ports (JSON)', async () => {
    const file = await deviceFile(
      'm22.json',
      JSON.stringify({ model: 'm22', active: [{ name: 'eth0', family: 'inet', method: 'dhcp' }] }),
    );
    const description = await loadDeviceDescription(file);
    expect(Object.keys(description.model.interfaces)).toEqual(['eth0', 'wlan0']);
  });

  it('starts with eth0 on DHCP when it gives no active configuration', async () => {
    const file = await deviceFile('bare.yaml', 'model: m50\n');
    expect((await loadDeviceDescription(file)).active).toEqual([{ name: 'eth0', family: 'inet', method: 'dhcp' }]);
  });

  it.each([
    [
      'an unknown model without interfaces',
      'model: m99\n',
      'model "m99" is not built in, so "interfaces" is required.',
    ],
    ['an unknown field', 'model: m50\ncolour: red\n', 'Unknown field "colour".'],
    [
      'a port without its speeds',
      'model: x\ninterfaces:\n  eth0: { autoneg: true, duplex: [full] }\n',
      'Field "interfaces.eth0" must be { wireless: true } or { autoneg, speeds, duplex }.',
    ],
    [
      'a starting stanza the API would refuse',
      'model: m50\nactive:\n  - { name: eth0, family: inet, method: static }\n',
      'Starting configuration, active[0]: Field "address" is required with method "static".',
    ],
    ['a file that is not YAML', 'model: [\n', 'not valid YAML or JSON.'],
  ])('refuses %s', async (_label, text, message) => {
    const file = await deviceFile('bad.yaml', text);
    await expect(loadDeviceDescription(file)).rejects.toThrow(message);
  });

  it('refuses a device file that cannot be read', async () => {
    await expect(loadDeviceDescription(join(dir, 'missing.yaml'))).rejects.toThrow(
      `Cannot read device file ${join(dir, 'missing.yaml')}.`,
    );
  });

  it("refuses a starting file that its slot would refuse as an upload, with the simulator's own code", async () => {
    const file = await deviceFile(
      'wrong-kind.yaml',
      `model: m50\nfiles:\n  - { slot: wpa_ca_cert, name: ca.key, path: ${pki.path('ca.key')} }\n`,
    );
    const attempt = loadDeviceDescription(file);
    await expect(attempt).rejects.toThrow(
      `Device file ${file}: files[0]: slot "wpa_ca_cert" takes a certificate (PEM or DER); "ca.key" is not one.`,
    );
    await expect(attempt).rejects.toMatchObject({ name: 'SimulatorError', code: SimulatorErrorCode.FileInvalid });
  });

  it("says which file it cannot read, with the simulator's own code", async () => {
    await expect(loadDeviceDescription(join(dir, 'missing.yaml'))).rejects.toMatchObject({
      code: SimulatorErrorCode.FileUnreadable,
    });
  });

  it('refuses a starting configuration that leaves the management interface without an address', async () => {
    const file = await deviceFile(
      'no-mgmt.yaml',
      'model: m50\nactive:\n  - { name: eth1, family: inet, method: dhcp }\n',
    );
    const attempt = startSimulator({ device: await loadDeviceDescription(file) });
    await expect(attempt).rejects.toThrow(
      'The starting configuration makes the device unreachable: management interface eth0 has no active stanza with an address.',
    );
    await expect(attempt).rejects.toMatchObject({ code: SimulatorErrorCode.StartRefused });
  });
});
