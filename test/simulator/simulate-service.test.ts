import { readFile, stat } from 'node:fs/promises';
import { join } from 'node:path';
import { Agent, request } from 'undici';
import { beforeAll, describe, expect, it } from 'vitest';
import { loadAuthenticatorProfile, type AuthenticatorProfile } from '../../src/simulator/index.js';
import { startSimulatedService } from '../../src/simulator/service/index.js';
import { useLabPki } from '../support/lab-pki.js';
import { useProcesses } from '../support/run-cli.js';
import { useSimulators } from '../support/simulator-fixture.js';
import { tempFolder } from '../support/temp-folder.js';
import { apiClient, waitForPhase } from './sim-client.js';

/**
 * `mpprov simulate --service`: the simulated monitoring service beside the device, its MP's
 * connectionStatus following the device's real outages through the device's event hooks.
 */

const processes = useProcesses();

interface ServiceLine {
  url: string;
  token: string;
  ca_pem: string;
  fingerprint_sha256: string;
  reconnect_ms: number;
  hostnames: string[];
  token_file: string;
  ca_file: string;
}

async function statusOf(service: ServiceLine, hostname: string, dispatcher: Agent): Promise<string> {
  const res = await request(`${service.url}/v3/appliance?hostname=${hostname}`, {
    dispatcher,
    headers: { authorization: `Token ${service.token}`, accept: 'application/json' },
  });
  const body = (await res.body.json()) as { connectionStatus: string }[];
  expect(res.statusCode).toBe(200);
  expect(body).toHaveLength(1);
  return body[0]?.connectionStatus ?? '';
}

describe('mpprov simulate --service', () => {
  it('prints the service, writes its token and CA, and the MP is UNAVAILABLE from the restart until the reconnect delay after it answers', async () => {
    const dir = join(tempFolder('sim-service'), 'files');
    const { child, firstLine, exited } = await processes.startCli([
      'simulate',
      '--json',
      '--password',
      'pw-123',
      '--restart-ms',
      '300',
      '--service',
      '--service-reconnect-ms',
      '500',
      '--service-hostname',
      'branch-mp',
      '--service-files',
      dir,
    ]);
    const info = JSON.parse(firstLine) as { api_url: string; service: ServiceLine };
    const service = info.service;
    expect(service).toMatchObject({
      reconnect_ms: 500,
      hostnames: ['branch-mp'],
      token_file: join(dir, 'service-token'),
      ca_file: join(dir, 'service-ca.pem'),
    });
    expect(service.url).toMatch(/^https:\/\/127\.0\.0\.1:\d+\/api$/);
    expect(service.fingerprint_sha256).toMatch(/^([0-9A-F]{2}:){31}[0-9A-F]{2}$/);
    expect(await readFile(service.token_file, 'utf8')).toBe(`${service.token}\n`);
    expect((await stat(service.token_file)).mode & 0o777).toBe(0o600);
    expect(await readFile(service.ca_file, 'utf8')).toBe(service.ca_pem);

    // Trusting only the printed CA, as agent.yaml's service.tls.ca does.
    const trusted = new Agent({ connect: { ca: service.ca_pem } });
    expect(await statusOf(service, 'branch-mp', trusted)).toBe('AVAILABLE');
    const restart = await request(`${info.api_url}/service/networking/?action=restart`, {
      method: 'PUT',
      dispatcher: new Agent({ connect: { rejectUnauthorized: false } }),
      headers: {
        authorization: `Basic ${Buffer.from('admin:pw-123').toString('base64')}`,
        'content-type': 'application/json',
      },
      body: '{}',
    });
    expect(restart.statusCode).toBe(202);
    await restart.body.dump();
    const restartedAt = Date.now();
    await new Promise((r) => setTimeout(r, 50));
    expect(await statusOf(service, 'branch-mp', trusted)).toBe('UNAVAILABLE');
    let available = false;
    while (!available && Date.now() - restartedAt < 5_000) {
      available = (await statusOf(service, 'branch-mp', trusted)) === 'AVAILABLE';
      if (!available) await new Promise((r) => setTimeout(r, 50));
    }
    expect(available).toBe(true);
    // Outage (300 ms) plus the reconnect delay (500 ms), measured from the restart.
    expect(Date.now() - restartedAt).toBeGreaterThanOrEqual(750);
    await trusted.close();
    child.kill('SIGTERM');
    expect((await exited).code).toBe(0);
  });
});

describe('device hooks', () => {
  const pki = useLabPki();
  let profile: AuthenticatorProfile;
  beforeAll(async () => {
    profile = await loadAuthenticatorProfile(pki.path('port.yaml'));
  });
  const { start } = useSimulators();

  it('a management port that fails 802.1X keeps the MP UNAVAILABLE in the service', async () => {
    const setup = await startSimulatedService({ devices: 1, hostname: 'mp-dot1x', reconnectMs: 0 });
    try {
      const failed: number[] = [];
      const hooks = {
        ...setup.hooks,
        managementDot1xFailed: (index: number) => (failed.push(index), setup.hooks.managementDot1xFailed?.(index)),
      };
      const sim = await start({ restartMs: 50, serviceRateLimit: false, switchPorts: { eth0: profile }, hooks });
      const api = apiClient(sim);
      await api.post('/interface/', {
        name: 'eth0',
        family: 'inet',
        method: 'dhcp',
        wpa_key_mgmt: 'IEEE8021X',
        wpa_eap: 'MD5',
        wpa_identity: 'md5user',
        wpa_password: 'WRONGsecret',
      });
      expect((await api.put('/service/networking/?action=restart', {})).status).toBe(202);
      expect(setup.service.connectionStatus('mp-dot1x')).toBe('UNAVAILABLE');
      await waitForPhase(sim, 'locked-out');
      expect(failed).toEqual([0]);
      await new Promise((r) => setTimeout(r, 200));
      expect(setup.service.connectionStatus('mp-dot1x')).toBe('UNAVAILABLE');
    } finally {
      await setup.service.close();
    }
  });

  it('a hook that throws does not disturb the device', async () => {
    const sim = await start({
      restartMs: 50,
      serviceRateLimit: false,
      hooks: {
        restartStarted: () => {
          throw new Error('listener bug');
        },
      },
    });
    const api = apiClient(sim);
    expect((await api.put('/service/networking/?action=restart', {})).status).toBe(202);
    await waitForPhase(sim, 'up');
    expect(sim.state().restarts).toBe(1);
  });
});
