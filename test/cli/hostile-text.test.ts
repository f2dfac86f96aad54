import { createServer, type Server } from 'node:https';
import type { AddressInfo } from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import { createSelfSignedCertificate } from '../../src/simulator/index.js';
import { expectNoRawControls, resultLines } from '../report/visible-output.js';
import { runCli } from '../support/run-cli.js';
import { useSimulators } from '../support/simulator-fixture.js';
import { PROFILE_DEVICE, stateDir, stickHead, stickWithConfig } from '../support/stick-workspace.js';

/**
 * Names and device sentences are data: `mpprov apply` and `plan` against the simulator and a
 * device that answers with escape sequences, with a monitoring point named to forge a RESULT line
 * and retitle the terminal. The output holds no raw control character, and no RESULT line but
 * the CLI's own.
 */

const simulators = useSimulators(PROFILE_DEVICE);
const engineArgs = () => ['--agent-config', '/nonexistent/agent.yaml', '--state-dir', stateDir()];

/** As YAML writes it (double-quoted escapes) and as it reads. */
const HOSTILE_NAME_YAML = '"forge\\nRESULT: CHANGED  forge\\e]0;owned\\a\\e[2K\\r\\u202eok"';
const HOSTILE_NAME = 'forge\nRESULT: CHANGED  forge\x1b]0;owned\x07\x1b[2K\r\u202eok';
const HOSTILE_SENTENCE = 'no\x1b]0;owned\x07\x1b[1A\x1b[2K\x1b[32mRESULT: CHANGED  all good\x9b\u202e\x7f';

/** A device that answers the reads with a capability list and refuses every change with HOSTILE_SENTENCE. */
async function startHostileDevice(): Promise<{ url: string; fingerprintSha256: string; server: Server }> {
  const cert = createSelfSignedCertificate();
  const server = createServer({ cert: cert.certificatePem, key: cert.privateKeyPem }, (req, res) => {
    req.resume();
    req.on('end', () => {
      res.setHeader('content-type', 'application/json');
      const path = req.url ?? '';
      if (req.method === 'GET' && path.startsWith('/api/v1/appliance/capability')) {
        res.end(JSON.stringify({ success: true, interfaces: { eth0: { autoneg: true }, eth1: { autoneg: true } } }));
        return;
      }
      res.statusCode = 400;
      res.end(JSON.stringify({ success: false, error: HOSTILE_SENTENCE }));
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    url: `https://127.0.0.1:${(server.address() as AddressInfo).port}`,
    fingerprintSha256: cert.fingerprintSha256,
    server,
  };
}

const servers: Server[] = [];
afterEach(() => {
  for (const server of servers.splice(0)) server.close();
});

const hostileStick = (device: { url: string; fingerprintSha256: string }, interfaces = ''): string =>
  stickWithConfig(stickHead(device, interfaces).replace('name: mp1', `name: ${HOSTILE_NAME_YAML}`));

const ETH1 =
  '    interfaces:\n      eth1:\n        ipv4: { method: static, address: 192.0.2.10/24, gateway: 192.0.2.1 }\n';

describe('a hostile monitoring point name and device sentence', () => {
  it('apply (text) against the simulator shows the name escaped, with one RESULT line', async () => {
    const device = await simulators.start();
    const file = hostileStick(device, ETH1);
    const result = await runCli(['apply', file, ...engineArgs()]);
    expect(result.stderr).toBe('');
    expect(result.code).toBe(0);
    expectNoRawControls(result.stdout, 'stdout');
    expect(resultLines(result.stdout)).toEqual([expect.stringMatching(/^RESULT: CHANGED \(forge\\nRESULT: CHANGED/)]);
    expect(result.stdout).toContain(
      '[forge\\nRESULT: CHANGED  forge\\x1b]0;owned\\x07\\x1b[2K\\r\\u202eok] connecting to',
    );
  });

  it('apply --json keeps the name as data, JSON-escaped, with no raw control character', async () => {
    const device = await simulators.start();
    const file = hostileStick(device, ETH1);
    const result = await runCli(['apply', file, '--json', ...engineArgs()]);
    expect(result.code).toBe(0);
    expectNoRawControls(result.stdout, 'stdout');
    const lines = result.stdout
      .trim()
      .split('\n')
      .map((line) => JSON.parse(line) as { type?: string; devices?: { device: string }[] });
    expect(lines.find((line) => line.type === 'result')?.devices?.[0]?.device).toBe(HOSTILE_NAME);
  });

  it.each(['apply', 'plan'])('%s (text) against a device answering with escape sequences', async (command) => {
    const device = await startHostileDevice();
    servers.push(device.server);
    const file = hostileStick(device, ETH1);
    const result = await runCli([command, file, ...engineArgs()]);
    expect(result.code).toBe(1);
    expectNoRawControls(result.stdout, 'stdout');
    expectNoRawControls(result.stderr, 'stderr');
    expect(resultLines(result.stdout)).toEqual(command === 'apply' ? [expect.stringMatching(/^RESULT: FAILED /)] : []);
    // The device's own words are still there, shown rather than obeyed.
    expect(result.stdout).toContain(
      'no\\x1b]0;owned\\x07\\x1b[1A\\x1b[2K\\x1b[32mRESULT: CHANGED all good\\x9b\\u202e\\x7f',
    );
  });
});
