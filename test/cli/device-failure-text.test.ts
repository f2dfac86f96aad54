import { createServer } from 'node:net';
import { describe, expect, it } from 'vitest';
import { runCli } from '../support/run-cli.js';
import { useSimulators } from '../support/simulator-fixture.js';
import { PROFILE_DEVICE, stateDir, stickHead, stickWithConfig } from '../support/stick-workspace.js';

/**
 * A device the run cannot talk to: `plan` and `apply` in text mode name the cause on stdout, as
 * `--json` does, instead of ending with exit 1 and nothing said about the device.
 */

const { start } = useSimulators(PROFILE_DEVICE);
const engineArgs = () => ['--agent-config', '/nonexistent/agent.yaml', '--state-dir', stateDir()];
/** A pin no test certificate has. */
const WRONG_PIN = Array.from({ length: 32 }, () => 'AB').join(':');

/** A loopback port nothing listens on: taken from the kernel, then released. */
async function closedPort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const address = server.address();
  if (address === null || typeof address === 'string') throw new Error('the probe server has no TCP address');
  await new Promise<void>((resolve, reject) => server.close((err) => (err === undefined ? resolve() : reject(err))));
  return address.port;
}

describe.each([
  // plan has no live step list: the line after the (empty) plans is the only place the cause appears.
  { command: 'plan', line: (sentence: string) => `mp1: FAILED: ${sentence}` },
  { command: 'apply', line: (sentence: string) => `[mp1] FAILED: ${sentence}` },
])('mpprov $command in text mode', ({ command, line }) => {
  it('names the cause for a device that cannot be reached', async () => {
    const url = `https://127.0.0.1:${await closedPort()}`;
    const file = stickWithConfig(stickHead({ url, fingerprintSha256: WRONG_PIN }));
    const result = await runCli([command, file, ...engineArgs()]);
    expect(result.code).toBe(1);
    expect(result.stdout.split('\n')).toContain(line(`cannot reach ${url}: connection refused`));
  });

  it('names the cause for a device whose certificate is not the pinned one', async () => {
    const device = await start();
    const file = stickWithConfig(stickHead({ url: device.url, fingerprintSha256: WRONG_PIN }));
    const result = await runCli([command, file, ...engineArgs()]);
    expect(result.code).toBe(1);
    expect(result.stdout.split('\n')).toContain(
      line(
        `the device at ${device.url} presented a certificate with SHA-256 fingerprint ${device.fingerprintSha256}, ` +
          `but the configuration pins ${WRONG_PIN}; no credentials were sent`,
      ),
    );
    expect(device.requests()).toEqual([]);
  });
});
