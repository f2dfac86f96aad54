import { writeFileSync } from 'node:fs';
import { request } from 'undici';
import { describe, expect, it } from 'vitest';
import type { SimulatorHandle } from '../../src/simulator/index.js';
import { applyFile } from './apply-helpers.js';
import { writeSequence } from '../support/device-observations.js';
import { useSimulators } from '../support/simulator-fixture.js';
import {
  PROFILE_ADMIN_PASSWORD,
  PROFILE_DEVICE,
  stickHead,
  stickWithConfig,
  testAgentConfig,
} from '../support/stick-workspace.js';
import { Agent } from 'undici';

const { start: startProfileDevice } = useSimulators(PROFILE_DEVICE);
let device: SimulatorHandle | undefined;

/** Someone else's change, made straight through the Admin API, left pending on the device. */
async function postForeignStanza(sim: SimulatorHandle, body: Record<string, unknown>): Promise<void> {
  const dispatcher = new Agent({ connect: { rejectUnauthorized: false } });
  const response = await request(`${sim.apiUrl}/interface/`, {
    method: 'POST',
    dispatcher,
    headers: {
      authorization: `Basic ${Buffer.from(`admin:${PROFILE_ADMIN_PASSWORD}`).toString('base64')}`,
      'content-type': 'application/json',
    },
    body: JSON.stringify(body),
  });
  expect(response.statusCode).toBe(200);
  await response.body.text();
  await dispatcher.close();
}

const eth1 = '    interfaces:\n      eth1:\n        ipv4: { method: dhcp }\n';

describe('pending changes mpprov did not make', () => {
  it('stop the plan with a clear message', async () => {
    device = await startProfileDevice();
    await postForeignStanza(device, { name: 'wlan0', family: 'inet', method: 'dhcp', ssid: 'Other', security: 'open' });
    device.clearRequests();
    const { result } = await applyFile(stickWithConfig(stickHead(device, eth1)));
    expect(result.devices[0]?.message).toBe(
      'refused before any change: the device has pending changes that mpprov did not make (wlan0 inet); they would become active at the next networking restart (review them on the device, or re-run with --discard-pending to drop them)',
    );
    expect(writeSequence(device)).toEqual([]);
  });

  it("are dropped with --discard-pending, and only the file's changes become active", async () => {
    device = await startProfileDevice();
    await postForeignStanza(device, { name: 'wlan0', family: 'inet', method: 'dhcp', ssid: 'Other', security: 'open' });
    device.clearRequests();
    const { result } = await applyFile(stickWithConfig(stickHead(device, eth1)), { discardPending: true });
    expect(result.outcome).toBe('changed');
    expect(writeSequence(device)).toEqual([
      'DELETE /api/v1/interface/wlan0/ family=inet',
      'POST /api/v1/interface/ eth1 inet',
      'PUT /api/v1/service/networking/',
    ]);
    expect(
      device
        .state()
        .interfaces.active.map((i) => i.name)
        .sort(),
    ).toEqual(['eth0', 'eth1']);
  });
});

describe('--no-rollback', () => {
  it('keeps a wrong result and says so', async () => {
    device = await startProfileDevice();
    const agent = testAgentConfig();
    const file = stickWithConfig(stickHead(device, eth1));
    expect((await applyFile(file, { agent })).result.outcome).toBe('changed');
    writeFileSync(
      file,
      stickHead(device, '    interfaces:\n      eth1:\n        ipv4: { method: dhcp, nameservers: [198.51.100.53] }\n'),
    );
    device.setFaults(['drop-field=dns_nameservers,times=1']);
    const { result } = await applyFile(file, { agent, rollback: false });
    expect(result.devices[0]?.rollback).toBeUndefined();
    expect(result.devices[0]?.message).toBe(
      'after the restart the device runs a different configuration than requested: eth1 inet: dns_nameservers is (none), expected ["198.51.100.53"]',
    );
    expect(device.state().restarts).toBe(2);
  });
});

describe('a run that fails before its restart', () => {
  it('takes back what it already posted, so the next run finds nothing foreign', async () => {
    device = await startProfileDevice();
    const sim = device;
    const file = stickWithConfig(
      stickHead(sim, '    interfaces:\n      eth1:\n        ipv4: { method: dhcp }\n        ipv6: { method: auto }\n'),
    );
    const { result } = await applyFile(file, {
      onEvent: (event) => {
        // The device starts failing right after the first stanza went in.
        if (event.type === 'step-done' && event.description.startsWith('POST eth1 inet '))
          sim.setFaults(['error=1@POST /api/v1/interface/']);
      },
    });
    expect(result.devices[0]?.message).toBe(
      'POST eth1 inet6 (create) failed: the device failed internally on POST /interface/ (eth1 inet6) (HTTP 500): Internal server error (injected fault); the changes already posted were taken back; nothing became active',
    );
    expect(sim.state().restarts).toBe(0);
    sim.setFaults([]);
    const again = await applyFile(file);
    expect(again.result.devices[0]?.message).toMatch(/^applied and verified/);
  });
});
