import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  loadDeviceDescription,
  simulatorOptionsFromFlags,
  startSimulator,
  type SimulatorHandle,
  type SimulatorOptions,
} from '../../src/simulator/index.js';
import { apiClient, restartNetworking, STANZA, interfaceOf, interfacesOf } from './sim-client.js';

/**
 * GET /interface/ shows exactly the model's view by default: `dot1x_state` (an authorization state
 * the Admin API does not have) only when asked for, by the start option, the device file or the
 * command line flag (its process test is in simulate-command.test.ts). The control port, test-only,
 * always shows it.
 */

let dir: string;

beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'mpprov-sim-view-'));
});

afterAll(async () => {
  await rm(dir, { recursive: true, force: true });
});

/** The active and pending views of a device with eth0 and eth1 (802.1X) active, and its control state. */
async function views(options: SimulatorOptions): Promise<{
  sim: SimulatorHandle;
  active: Record<string, unknown>[];
  pending: Record<string, unknown>[];
  one: Record<string, unknown>;
}> {
  const sim = await startSimulator({ restartMs: 50, serviceRateLimit: false, ...options });
  const api = apiClient(sim);
  try {
    expect(
      (
        await api.post('/interface/', {
          ...STANZA.eth1Dhcp,
          wpa_key_mgmt: 'IEEE8021X',
          wpa_eap: 'MD5',
          wpa_identity: 'u',
          wpa_password: 'p',
        })
      ).status,
    ).toBe(200);
    await restartNetworking(sim, api);
    const active = interfacesOf(await api.get('/interface/?config_state=active'));
    const pending = interfacesOf(await api.get('/interface/?config_state=pending'));
    const one = interfaceOf(await api.get('/interface/eth1/?config_state=active'));
    expect(active).toHaveLength(2);
    expect(pending).toHaveLength(2);
    return { sim, active, pending, one };
  } finally {
    await api.close();
  }
}

describe('the Admin API view', () => {
  it("is exactly the model's by default: no dot1x_state anywhere; the control port still shows it", async () => {
    const { sim, active, pending, one } = await views({});
    try {
      expect(sim.showDot1xState).toBe(false);
      expect(JSON.stringify({ active, pending, one })).not.toContain('dot1x_state');
      expect(active.map((i) => Object.keys(i).sort())).toEqual([
        ['config_state', 'families', 'name'],
        ['config_state', 'families', 'name'],
      ]);
      const control = sim.state().interfaces.active;
      expect(control.map((i) => [i['name'], i['dot1x_state']])).toEqual([
        ['eth0', 'disabled'],
        ['eth1', 'authorized'],
      ]);
    } finally {
      await sim.close();
    }
  });

  it('shows dot1x_state in the active view with showDot1xState, never in the pending view', async () => {
    const { sim, active, pending, one } = await views({ showDot1xState: true });
    try {
      expect(sim.showDot1xState).toBe(true);
      expect(active.map((i) => [i['name'], i['dot1x_state']])).toEqual([
        ['eth0', 'disabled'],
        ['eth1', 'authorized'],
      ]);
      expect(one['dot1x_state']).toBe('authorized');
      expect(JSON.stringify(pending)).not.toContain('dot1x_state');
    } finally {
      await sim.close();
    }
  });

  it("follows the device file's show_dot1x_state, which the start option overrides", async () => {
    const file = join(dir, 'rehearsal.yaml');
    await writeFile(file, 'model: m50\nshow_dot1x_state: true\n');
    const device = await loadDeviceDescription(file);
    const fromFile = await views({ device });
    await fromFile.sim.close();
    expect(fromFile.one['dot1x_state']).toBe('authorized');
    const overridden = await views({ device, showDot1xState: false });
    await overridden.sim.close();
    expect(overridden.one).not.toHaveProperty('dot1x_state');
  });

  it('refuses a show_dot1x_state that is not true or false', async () => {
    const file = join(dir, 'bad.yaml');
    await writeFile(file, 'model: m50\nshow_dot1x_state: yes please\n');
    await expect(loadDeviceDescription(file)).rejects.toThrow(
      `Device file ${file}: Field "show_dot1x_state" must be true or false.`,
    );
  });

  it('takes --show-dot1x-state from the command line flags, and leaves the device file to decide without it', async () => {
    const flags = {
      host: '127.0.0.1',
      username: 'admin',
      mgmt: 'eth0',
      switch: [],
      restartMs: '50',
      rebootMs: '50',
      fault: [],
      rateLimit: true,
      dot1xBackend: 'model',
    };
    expect((await simulatorOptionsFromFlags({ ...flags, showDot1xState: true })).showDot1xState).toBe(true);
    expect(await simulatorOptionsFromFlags(flags)).not.toHaveProperty('showDot1xState');
  });
});
