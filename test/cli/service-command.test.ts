import { readdirSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import type { DeviceEventHooks } from '../../src/simulator/index.js';
import type { ServiceSimulator } from '../../src/simulator/service/index.js';
import { clientOf, expectNoSecret, OTHER_TOKEN, startService, TOKEN } from '../service/service-fixtures.js';
import { runCli } from '../support/run-cli.js';
import { useSimulators } from '../support/simulator-fixture.js';
import { PROFILE_DEVICE, stickHead, stickWithConfig } from '../support/stick-workspace.js';
import { tempFolder } from '../support/temp-folder.js';

/**
 * The post-check and `mpprov service` as a technician runs them: the built CLI as a child
 * process, agent.yaml with a token file and the service's CA, the simulated MP and service over HTTPS.
 */

let service: ServiceSimulator;
const known = (hostname: string) => service.appliances().some((a) => a.hostname === hostname);
const hooks: DeviceEventHooks = {
  restartStarted: () => known('mp1') && service.restartStarted('mp1'),
  answeringAgain: () => known('mp1') && service.answeringAgain('mp1'),
};
const { start } = useSimulators({ ...PROFILE_DEVICE, restartMs: 300, hooks });

beforeAll(async () => {
  service = await startService({ reconnectMs: 300 });
});
afterAll(async () => service?.close());
beforeEach(() => {
  if (known('mp1')) service.unregisterAppliance('mp1');
  service.registerAppliance({ hostname: 'mp1', orgId: 12, macAddress: '00:1b:21:3a:4f:10' });
});

/** agent.yaml with a service block, the token in a file (with its trailing newline), the CA in another. */
function agentYaml(token = TOKEN, waitS = 10, extra: string[] = []): { file: string; state: string } {
  const dir = tempFolder('agent');
  const state = join(dir, 'state');
  writeFileSync(join(dir, 'service.token'), `${token}\n`, { mode: 0o600 });
  writeFileSync(join(dir, 'service-ca.pem'), service.caPem);
  const file = join(dir, 'agent.yaml');
  writeFileSync(
    file,
    [
      `state_dir: ${state}`,
      'service:',
      `  url: ${service.url}`,
      `  token_file: ${join(dir, 'service.token')}`,
      `  tls: { ca: ${join(dir, 'service-ca.pem')} }`,
      `  wait_connected_s: ${waitS}`,
      ...extra,
      '',
    ].join('\n'),
  );
  return { file, state };
}

const ETH1 =
  '    interfaces:\n      eth1:\n        ipv4: { method: static, address: 192.0.2.10/24, gateway: 192.0.2.1 }\n';

function filesUnder(dir: string): string[] {
  return readdirSync(dir, { recursive: true, encoding: 'utf8' })
    .map((f) => join(dir, f))
    .filter((f) => statSync(f).isFile());
}

describe('mpprov apply with the post-check', () => {
  it('exits 0 and says "connected to the service" once the MP reports again', async () => {
    const device = await start();
    const agent = agentYaml();
    const run = await runCli(['apply', stickWithConfig(stickHead(device, ETH1)), '--agent-config', agent.file]);
    expect(run.stderr).toBe('');
    expect(run.stdout).toContain('[mp1] confirm the service sees it (mp1, up to 10 s) ...');
    expect(run.stdout).toMatch(/\[mp1\] connected to the service \(\d+\.\d s\)/);
    expect(run.stdout).toContain('RESULT: CHANGED (mp1 changed, connected)');
    expect(run.code).toBe(0);
  });

  it('exits 3 when the device is configured and verified but the service does not confirm it; the token is nowhere', async () => {
    const device = await start();
    service.setConnectionStatus('mp1', 'BLOCKED');
    const agent = agentYaml(TOKEN, 2);
    const run = await runCli(['apply', stickWithConfig(stickHead(device, ETH1)), '--agent-config', agent.file]);
    expect(run.stdout).toContain('RESULT: CHANGED (mp1 changed, NOT connected)');
    expect(run.stdout).toContain(
      'mp1: configured and verified, but NOT CONFIRMED by the monitoring service: BLOCKED in the service: an administrator of the service must unblock it',
    );
    expect(run.code).toBe(3);
    expectNoSecret([run.stdout, run.stderr, ...filesUnder(agent.state).map((f) => readFileSync(f, 'utf8'))], [TOKEN]);
  });

  it('--json: service events and a service field in the result; exit 3 for a bad token', async () => {
    const device = await start();
    const agent = agentYaml('tok-Wrong-7781-never-shown');
    const run = await runCli([
      'apply',
      stickWithConfig(stickHead(device, ETH1)),
      '--agent-config',
      agent.file,
      '--json',
    ]);
    expect(run.code).toBe(3);
    const lines = run.stdout
      .trim()
      .split('\n')
      .map(
        (l) =>
          JSON.parse(l) as {
            type: string;
            devices?: { outcome: string; service?: { kind: string; sentence: string } }[];
          },
      );
    expect(lines.map((l) => l.type)).toContain('service-check-start');
    expect(lines.map((l) => l.type)).toContain('service-check-done');
    const result = lines.at(-1);
    expect(result?.type).toBe('result');
    expect(result?.devices?.[0]).toMatchObject({ outcome: 'changed', service: { kind: 'bad-token' } });
    expectNoSecret([run.stdout, run.stderr], ['tok-Wrong-7781-never-shown']);
  });

  it('exits 1, not 3, when a device failed', async () => {
    const device = await start({ faults: ['no-return'] });
    const agent = agentYaml();
    const run = await runCli([
      'apply',
      stickWithConfig(stickHead(device, ETH1)),
      '--agent-config',
      agent.file,
      '--restart-timeout',
      '2',
      '--no-rollback',
    ]);
    expect(run.code).toBe(1);
    expect(run.stdout).not.toContain('confirm the service sees it');
  });
});

describe('mpprov service check and status', () => {
  it('check: one line per check, exit 0', async () => {
    const run = await runCli(['service', 'check', '--agent-config', agentYaml().file]);
    expect(run.stderr).toBe('');
    expect(run.code).toBe(0);
    expect(run.stdout.trim().split('\n')).toEqual([
      `ok    tls           connected to ${service.url} over TLS; its certificate is trusted (service.tls.ca and the system store)`,
      'ok    token         the service accepts the access token (GET /v3/organization)',
      'ok    organizations the token sees 2 organization(s): Branch Networks (12), Head Office (40)',
      expect.stringMatching(
        // eslint-disable-next-line no-regex-spaces -- the columns as printed, aligned with the lines above
        /^ok    appliances    the token may read Monitoring Points: \d+ listed \(GET \/v3\/appliance\)$/,
      ),
      `service: OK (${service.url})`,
    ]);
  });

  it('check: a bad token and a token without access fail with the reason, exit 1', async () => {
    const bad = await runCli(['service', 'check', '--agent-config', agentYaml('tok-Wrong-5521-never-shown').file]);
    expect(bad.code).toBe(1);
    expect(bad.stdout).toContain('FAIL  token         the service at');
    expect(bad.stdout).toContain('does not accept the access token (HTTP 401 "Bad credentials")');
    const denied = await runCli(['service', 'check', '--agent-config', agentYaml(OTHER_TOKEN).file]);
    expect(denied.code).toBe(1);
    expect(denied.stdout).toContain('FAIL  token');
    expect(denied.stdout).toContain('no permission');
    expectNoSecret([bad.stdout, bad.stderr, denied.stdout, denied.stderr], ['tok-Wrong-5521-never-shown', OTHER_TOKEN]);
  });

  it('check: an untrusted certificate fails the TLS line and sends no token', async () => {
    const agent = agentYaml();
    writeFileSync(agent.file, readFileSync(agent.file, 'utf8').replace(/ {2}tls: .*\n/, ''));
    const run = await runCli(['service', 'check', '--agent-config', agent.file]);
    expect(run.code).toBe(1);
    expect(run.stdout.split('\n')[0]).toMatch(/^FAIL {2}tls /);
    expect(run.stdout).toContain('no token was sent');
  });

  it('status: status, organization and MAC per hostname; exit 1 if one is unknown', async () => {
    const agent = agentYaml();
    const run = await runCli(['service', 'status', 'mp1', '--agent-config', agent.file]);
    expect(run.stdout).toMatch(
      /^mp1 {2}AVAILABLE {2}IP 198\.51\.100\.\d+ {2}org Branch Networks \(12\) {2}MAC 00:1b:21:3a:4f:10\n$/,
    );
    expect(run.code).toBe(0);
    const unknown = await runCli(['service', 'status', 'mp1', 'nobody', '--agent-config', agent.file]);
    expect(unknown.stdout).toContain('nobody  unknown to the service');
    expect(unknown.code).toBe(1);
  });

  it('status --json: the version line, then one object per hostname', async () => {
    const agent = agentYaml();
    const run = await runCli(['service', 'status', 'mp1', 'nobody', '--json', '--agent-config', agent.file]);
    const lines = run.stdout
      .trim()
      .split('\n')
      .map((l) => JSON.parse(l) as Record<string, unknown>);
    expect(lines).toHaveLength(3);
    const { version } = JSON.parse(readFileSync(new URL('../../package.json', import.meta.url), 'utf8')) as {
      version: string;
    };
    expect(lines[0]).toEqual({ type: 'version', format: 1, mpprov: version });
    expect(lines[1]).toMatchObject({
      known: true,
      hostname: 'mp1',
      connectionStatus: 'AVAILABLE',
      orgName: 'Branch Networks',
    });
    expect(lines[1]?.resolvedIp).toMatch(/^198\.51\.100\.\d+$/);
    expect(lines[2]).toEqual({ hostname: 'nobody', known: false });
    expect(run.code).toBe(1);
  });
});

describe('mpprov service paths', () => {
  it("lists an MP's paths with status and last data, text and --json; exit 1 for an unknown MP", async () => {
    const { api } = clientOf(service);
    try {
      const path = await api.createPath({ sourceAppliance: 'mp1', target: '192.0.2.80', orgId: 12 });
      await api.setTargetLocation(path.id, 'Datacenter Frankfurt');
    } finally {
      await api.close();
    }
    const agent = agentYaml();
    const run = await runCli(['service', 'paths', 'mp1', '--agent-config', agent.file]);
    expect(run.stderr).toBe('');
    expect(run.stdout).toMatch(
      /^mp1 {2}path \d+ to 192\.0\.2\.80 {2}(INDETERMINATE|SQA_NOT_VIOLATED) {2}(no data in the last hour|last data \S+Z) {2}location Datacenter Frankfurt\n$/,
    );
    expect(run.code).toBe(0);
    const json = await runCli(['service', 'paths', 'mp1', 'nobody', '--json', '--agent-config', agent.file]);
    const lines = json.stdout
      .trim()
      .split('\n')
      .map((l) => JSON.parse(l) as Record<string, unknown>);
    expect(lines[1]).toMatchObject({
      hostname: 'mp1',
      known: true,
      orgId: 12,
      paths: [{ target: '192.0.2.80', location: 'Datacenter Frankfurt' }],
    });
    expect(lines[2]).toEqual({ hostname: 'nobody', known: false });
    expect(json.code).toBe(1);
    expectNoSecret([run.stdout, run.stderr, json.stdout, json.stderr], [TOKEN]);
  });
});

describe('mpprov service status and paths, the service refusing ?hostname=', () => {
  it("lists agent.yaml's organization and matches the MP itself: the same answer as a service that searches", async () => {
    const { api } = clientOf(service);
    try {
      await api.createPath({ sourceAppliance: 'mp1', target: '192.0.2.81', orgId: 12 });
    } finally {
      await api.close();
    }
    // An MP of another organization with a name that only starts alike: never taken for mp1.
    if (!known('mp10')) service.registerAppliance({ hostname: 'mp10', orgId: 13 });
    const agent = agentYaml(TOKEN, 10, ['  org_id: 12']);
    service.setFaults({ refuseHostnameQuery: true });
    try {
      service.clearRequests();
      const status = await runCli(['service', 'status', 'mp1', '--agent-config', agent.file]);
      expect(status.stdout).toMatch(
        /^mp1 {2}AVAILABLE {2}IP 198\.51\.100\.\d+ {2}org Branch Networks \(12\) {2}MAC 00:1b:21:3a:4f:10\n$/,
      );
      expect(status.code).toBe(0);
      const paths = await runCli(['service', 'paths', 'mp1', '--agent-config', agent.file]);
      expect(paths.stdout).toMatch(/^mp1 {2}path \d+ to 192\.0\.2\.81 {2}/m);
      expect(paths.code).toBe(0);
      const listings = service
        .requests()
        .filter((r) => r.path === '/api/v3/appliance')
        .map((r) => `${r.status} ${new URLSearchParams(r.query).toString()}`);
      expect(listings).toEqual(['400 hostname=mp1', '200 orgId=12', '400 hostname=mp1', '200 orgId=12']);
      expectNoSecret([status.stdout, status.stderr, paths.stdout, paths.stderr], [TOKEN]);
    } finally {
      service.clearFaults();
    }
  });
});
