import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { startTestServer, type TestServer } from '../client/test-server.js';
import { runCli } from '../support/run-cli.js';
import { useSimulator } from '../support/simulator-fixture.js';
import { stateDir, stickWithConfig } from '../support/stick-workspace.js';
import { tempFolder } from '../support/temp-folder.js';

/**
 * The trust boundary (docs/agent-config.md): the laptop's admin password goes only to a device whose TLS
 * identity agent.yaml vouches for. A hostile stick names a host of its own, pins that host's own
 * certificate (or says insecure: true) and brings no password: refused before any connection.
 */

const LAPTOP_PASSWORD = 'Laptop-Held-Admin-Secret-93';

let server: TestServer | undefined;
afterEach(async () => {
  await server?.close();
  server = undefined;
});

/** agent.yaml holding the laptop's password in defaults, plus `extra` lines. */
function agentYaml(extra = ''): string {
  const dir = tempFolder('agent');
  const pw = join(dir, 'admin.pw');
  writeFileSync(pw, `${LAPTOP_PASSWORD}\n`, { mode: 0o600 });
  const file = join(dir, 'agent.yaml');
  writeFileSync(file, `version: 1\ndefaults:\n  password_file: ${pw}\n${extra}`);
  return file;
}

function hostileStick(url: string, tls: string): string {
  return stickWithConfig(
    `version: 1\nmonitoring_points:\n  - name: mp1\n    url: ${url}\n    tls: ${tls}\n    interfaces:\n      eth1:\n        ipv4: { method: dhcp }\n`,
  );
}

async function recordingServer(): Promise<TestServer> {
  server = await startTestServer((_req, _body, res) => {
    res.writeHead(500);
    res.end();
  });
  return server;
}

describe('laptop-held credentials', () => {
  for (const command of ['plan', 'apply'] as const) {
    it(`${command}: a stick pinning its own host's certificate gets no connection and no password`, async () => {
      const host = await recordingServer();
      const stick = hostileStick(host.url, `{ fingerprint_sha256: "${host.fingerprintSha256}" }`);
      const result = await runCli([command, stick, '--agent-config', agentYaml(), '--state-dir', stateDir()]);
      expect(result.code).toBe(1);
      expect(result.stdout).toContain(
        `refused before any connection: ${host.url} would receive the laptop's admin password from agent.yaml, but the stick's own tls block never vouches for a device that receives the laptop's credentials`,
      );
      expect(result.stdout).toContain(`add devices: { "${host.url}": { tls: { fingerprint_sha256:`);
      expect(host.connections).toBe(0);
      expect(host.requests).toEqual([]);
      expect(result.stdout + result.stderr).not.toContain(LAPTOP_PASSWORD);
    });
  }

  it('a stick saying insecure: true gets no connection either', async () => {
    const host = await recordingServer();
    const result = await runCli([
      'apply',
      hostileStick(host.url, '{ insecure: true }'),
      '--agent-config',
      agentYaml(),
      '--state-dir',
      stateDir(),
    ]);
    expect(result.code).toBe(1);
    expect(result.stdout).toContain(
      `refused before any connection: ${host.url} would receive the laptop's admin password from agent.yaml`,
    );
    expect(host.connections).toBe(0);
  });

  it("agent.yaml's own insecure: true never carries the laptop's password", async () => {
    const host = await recordingServer();
    const agent = agentYaml(`devices:\n  "${host.url}":\n    tls: { insecure: true }\n`);
    const stick = stickWithConfig(
      `version: 1\nmonitoring_points:\n  - name: mp1\n    url: ${host.url}\n    interfaces:\n      eth1:\n        ipv4: { method: dhcp }\n`,
    );
    const result = await runCli(['plan', stick, '--agent-config', agent, '--state-dir', stateDir()]);
    expect(result.code).toBe(1);
    expect(result.stdout).toContain(
      "agent.yaml's tls for it is insecure: true, which never carries the laptop's credentials",
    );
    expect(host.connections).toBe(0);
  });

  it('no password on the stick and none held: a clear problem', async () => {
    const host = await recordingServer();
    const stick = hostileStick(host.url, `{ fingerprint_sha256: "${host.fingerprintSha256}" }`);
    const result = await runCli([
      'plan',
      stick,
      '--agent-config',
      '/nonexistent/agent.yaml',
      '--state-dir',
      stateDir(),
    ]);
    expect(result.code).toBe(1);
    expect(result.stdout).toContain(
      `no admin password for ${host.url}: the stick gives none and agent.yaml holds none for this device`,
    );
    expect(host.connections).toBe(0);
  });
});

describe('a device agent.yaml vouches for', () => {
  const { sim } = useSimulator({ password: LAPTOP_PASSWORD });

  it('receives the laptop password when devices[url].tls pins it, whatever the stick says', async () => {
    const agent = agentYaml(`devices:\n  "${sim.url}":\n    tls: { fingerprint_sha256: "${sim.fingerprintSha256}" }\n`);
    const stick = hostileStick(sim.url, '{ insecure: true }');
    const result = await runCli(['plan', stick, '--agent-config', agent, '--state-dir', stateDir()]);
    expect(result.stdout).not.toContain('refused');
    expect(result.code).toBe(2);
    expect(sim.requests().length).toBeGreaterThan(0);
    expect(result.stdout + result.stderr).not.toContain(LAPTOP_PASSWORD);
  });

  it('and when defaults.tls pins it', async () => {
    const agent = agentYaml(`  tls: { fingerprint_sha256: "${sim.fingerprintSha256}" }\n`);
    const stick = stickWithConfig(
      `version: 1\nmonitoring_points:\n  - name: mp1\n    url: ${sim.url}\n    interfaces:\n      eth1:\n        ipv4: { method: dhcp }\n`,
    );
    const result = await runCli(['plan', stick, '--agent-config', agent, '--state-dir', stateDir()]);
    expect(result.code).toBe(2);
    expect(sim.requests().length).toBeGreaterThan(0);
  });

  it('a stick bringing its own password may use its own tls block', async () => {
    const dir = tempFolder('own');
    const stick = stickWithConfig(
      `version: 1\nmonitoring_points:\n  - name: mp1\n    url: ${sim.url}\n    password_file: own.pw\n    tls: { fingerprint_sha256: "${sim.fingerprintSha256}" }\n    interfaces:\n      eth1:\n        ipv4: { method: dhcp }\n`,
    );
    writeFileSync(join(stick, '..', 'own.pw'), `${LAPTOP_PASSWORD}\n`);
    const result = await runCli(['plan', stick, '--agent-config', join(dir, 'none.yaml'), '--state-dir', stateDir()]);
    expect(result.code).toBe(2);
    expect(sim.requests().length).toBeGreaterThan(0);
  });
});
