import { readFileSync, rmSync, writeFileSync } from 'node:fs';
import { availableParallelism } from 'node:os';
import { join } from 'node:path';
import { createSecureContext } from 'node:tls';
import { describe, expect, it } from 'vitest';
import { warmRootCertificateStore } from '../../src/cli/warm-root-store.js';
import { repoRoot, startNode } from '../support/run-cli.js';
import { useSimulators } from '../support/simulator-fixture.js';
import { PROFILE_DEVICE, stateDir, stickFromProfile } from '../support/stick-workspace.js';
import { tempFolder } from '../support/temp-folder.js';

describe("building Node's root certificate store in a worker", () => {
  it('is skipped when NODE_EXTRA_CA_CERTS already had Node build it at start', () => {
    expect(warmRootCertificateStore({ NODE_EXTRA_CA_CERTS: '/etc/ssl/certs/ca-certificates.crt' })).toBeUndefined();
  });

  it('runs once per process, on a machine with a core to spare, and its worker ends by itself', async () => {
    const worker = warmRootCertificateStore({});
    if (availableParallelism() < 2) {
      expect(worker).toBeUndefined();
      return;
    }
    expect(worker).toBeDefined();
    // Its one job done without error (an exception in it would end it with 1).
    const exitCode = await new Promise<number>((resolve) => worker!.once('exit', resolve));
    expect(exitCode).toBe(0);
    expect(warmRootCertificateStore({})).toBeUndefined();
    // The process's own contexts are unaffected.
    expect(createSecureContext({}).context).toBeDefined();
  });
});

describe('the worker of a real `mpprov apply` (the launcher starts it)', () => {
  const { start } = useSimulators(PROFILE_DEVICE);

  it("runs none of the operator's preloads (NODE_OPTIONS, node's command line): they run once, in the main thread", async () => {
    const device = await start();
    const file = stickFromProfile('peap-mschapv2.yaml', device.url);
    const folder = tempFolder('warm-root-store');
    const ran = join(folder, 'ran');
    // A preload that leaves a trace and writes to the process's stderr below Node's streams, as
    // a tracing agent does: run again in the worker it would print its line a second time.
    const preload = join(folder, 'preload.cjs');
    writeFileSync(
      preload,
      [
        "const { isMainThread } = require('node:worker_threads');",
        `require('node:fs').appendFileSync(${JSON.stringify(ran)}, isMainThread ? 'main\\n' : 'worker\\n');`,
        "require('node:fs').writeSync(2, 'preload says hello\\n');",
      ].join('\n'),
    );
    // NODE_EXTRA_CA_CERTS empty: set, no worker would be started at all.
    const launcher = join(repoRoot, 'dist/mpprov.cjs');
    const args = ['apply', file, '--agent-config', '/nonexistent/agent.yaml', '--state-dir', stateDir()];
    for (const [argv, env] of [
      [[launcher, ...args], { NODE_OPTIONS: `--require ${preload}` }],
      [['--require', preload, launcher, ...args], {}],
    ] as const) {
      rmSync(ran, { force: true });
      const apply = startNode(argv, {
        env: { ...env, NODE_EXTRA_CA_CERTS: '', MPPROV_COMPILE_CACHE: 'off', NO_COLOR: '1' },
      });
      expect((await apply.exited).code).toBe(0);
      expect(readFileSync(ran, 'utf8')).toBe('main\n');
      expect(apply.stderr().match(/preload says hello/g)).toHaveLength(1);
    }
  });
});
