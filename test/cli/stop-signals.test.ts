import { readdirSync, readlinkSync, mkdirSync, writeFileSync } from 'node:fs';
import { createServer, type Server, type Socket } from 'node:net';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { createSelfSignedCertificate } from '../../src/simulator/index.js';
import { startTestServer, type TestServer } from '../client/test-server.js';
import { startCli, type RunningProcess } from '../support/run-cli.js';
import { leakedForms } from '../support/secret-forms.js';
import { useSimulators } from '../support/simulator-fixture.js';
import {
  PEAP_PASSWORD,
  PROFILE_ADMIN_PASSWORD,
  PROFILE_DEVICE,
  stateDir,
  type StickTarget,
  stickWithConfig,
} from '../support/stick-workspace.js';
import { tempFolder } from '../support/temp-folder.js';

/**
 * SIGTERM and Ctrl-C (SIGINT) end `validate`, `plan` and `apply` within 2 s at any point, as real
 * child processes: against a device that accepts TCP and never answers, one that completes TLS and
 * never answers, one that trickles its answer, during the restart wait, and while validate reads a
 * stick of many files. Each run must be gone within 2 s of the signal, exit 128 + the signal's
 * number, print one "stopped by ..." sentence saying where it stopped, and leak no secret.
 */

const SECRETS = [PROFILE_ADMIN_PASSWORD, PEAP_PASSWORD];
const STATUS = { SIGTERM: 143, SIGINT: 130 } as const;

function stickFor(device: StickTarget): string {
  return stickWithConfig(
    [
      'version: 1',
      'monitoring_points:',
      '  - name: mp1',
      `    url: ${device.url}`,
      '    password_file: secrets/admin.pw',
      `    tls: { fingerprint_sha256: "${device.fingerprintSha256}" }`,
      '    interfaces:',
      '      eth1:',
      '        ipv4: { method: static, address: 192.0.2.10/24, gateway: 192.0.2.1 }',
      `        dot1x: { eap: peap, inner: mschapv2, identity: mp01@corp.example, password: "${PEAP_PASSWORD}" }`,
      '',
    ].join('\n'),
  );
}

const engineArgs = (): string[] => ['--agent-config', '/nonexistent/agent.yaml', '--state-dir', stateDir()];

async function until(check: () => boolean, what: string, proc: RunningProcess, timeoutMs = 20_000): Promise<void> {
  const end = Date.now() + timeoutMs;
  while (!check()) {
    if (Date.now() > end || proc.child.exitCode !== null)
      throw new Error(`waiting for ${what}; output so far:\n${proc.output()}`);
    await new Promise((r) => setTimeout(r, 10));
  }
}

/** Sends `signal`, and checks the end: within 2 s, 128 + signal number, one sentence, no secret. */
async function stopAndCheck(proc: RunningProcess, signal: 'SIGTERM' | 'SIGINT'): Promise<string> {
  const sent = performance.now();
  proc.child.kill(signal);
  const exit = await Promise.race([proc.exited, new Promise<'hung'>((r) => setTimeout(() => r('hung'), 5_000))]);
  const tookMs = performance.now() - sent;
  expect(exit, proc.output()).not.toBe('hung');
  expect(tookMs, proc.output()).toBeLessThan(2_000);
  expect(exit).toEqual({ code: STATUS[signal], signal: null });
  const sentences = proc
    .stderr()
    .split('\n')
    .filter((l) => l.startsWith('stopped by '));
  expect(sentences, proc.output()).toHaveLength(1);
  expect(sentences[0]).toMatch(new RegExp(`^stopped by ${signal}: `));
  expect(leakedForms(proc.output(), SECRETS)).toEqual([]);
  return sentences[0] ?? '';
}

/** Accepts TCP connections and never says a word: the TLS handshake never ends. */
async function silentTcp(): Promise<{ target: StickTarget; connections: () => number; close: () => Promise<void> }> {
  const sockets = new Set<Socket>();
  const server: Server = createServer((socket) => {
    sockets.add(socket);
    socket.on('error', () => undefined);
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  const port = (server.address() as { port: number }).port;
  const cert = createSelfSignedCertificate();
  const { X509Certificate } = await import('node:crypto');
  return {
    target: {
      url: `https://127.0.0.1:${port}`,
      fingerprintSha256: new X509Certificate(cert.certificatePem).fingerprint256,
    },
    connections: () => sockets.size,
    close: async () => {
      for (const s of sockets) s.destroy();
      await new Promise<void>((r) => server.close(() => r()));
    },
  };
}

describe('a signal ends plan and apply within 2 s', () => {
  const closers: (() => Promise<void>)[] = [];
  const running: RunningProcess[] = [];
  const sims = useSimulators(PROFILE_DEVICE);
  afterEach(async () => {
    for (const p of running.splice(0)) await p.stop('SIGKILL');
    for (const c of closers.splice(0)) await c();
  });
  const start = (args: string[]): RunningProcess => {
    const proc = startCli(args);
    running.push(proc);
    return proc;
  };

  for (const signal of ['SIGTERM', 'SIGINT'] as const) {
    it(
      `plan, ${signal}, a device that accepts TCP and never answers the TLS handshake`,
      { timeout: 30_000 },
      async () => {
        const device = await silentTcp();
        closers.push(device.close);
        const proc = start(['plan', stickFor(device.target), ...engineArgs()]);
        await until(() => device.connections() > 0, 'the connection', proc);
        const sentence = await stopAndCheck(proc, signal);
        expect(sentence).toBe(
          `stopped by ${signal}: mp1 while reading the device's configuration, nothing was changed on it; plan only reads devices: nothing was changed on any`,
        );
      },
    );

    it(
      `apply --json, ${signal}, a device that completes TLS and never answers the request`,
      { timeout: 30_000 },
      async () => {
        const device: TestServer = await startTestServer(() => new Promise<void>(() => undefined));
        closers.push(() => device.close());
        const proc = start(['apply', stickFor(device), ...engineArgs(), '--json']);
        await until(() => device.requests.length > 0, 'the first request', proc);
        const sentence = await stopAndCheck(proc, signal);
        expect(sentence).toBe(
          `stopped by ${signal}: mp1 while reading the device's configuration, nothing was changed on it`,
        );
        const lines = proc
          .stdout()
          .trim()
          .split('\n')
          .map(
            (l) =>
              JSON.parse(l) as { type: string; outcome?: string; devices?: { message: string; stoppedBy?: string }[] },
          );
        const result = lines.find((l) => l.type === 'result');
        expect(result?.outcome).toBe('failed');
        expect(result?.devices?.[0]).toMatchObject({
          stoppedBy: signal,
          message: `stopped by ${signal} while reading the device's configuration, nothing was changed on it`,
        });
        expect(lines.at(-1)).toEqual({ type: 'stopped', signal, sentence });
        expect(device.requests.map((r) => r.method)).toEqual(['GET']);
      },
    );

    it(`apply, ${signal}, a device that trickles its answer one byte at a time`, { timeout: 30_000 }, async () => {
      let trickling = false;
      const device = await startTestServer((_req, _body, res) => {
        res.writeHead(200, { 'content-type': 'application/json', 'content-length': '100000' });
        trickling = true;
        const timer = setInterval(() => res.write(' '), 100);
        res.on('close', () => clearInterval(timer));
      });
      closers.push(() => device.close());
      const proc = start(['apply', stickFor(device), ...engineArgs()]);
      await until(() => trickling, 'the trickle to begin', proc);
      await new Promise((r) => setTimeout(r, 300));
      const sentence = await stopAndCheck(proc, signal);
      expect(sentence).toBe(
        `stopped by ${signal}: mp1 while reading the device's configuration, nothing was changed on it`,
      );
      expect(proc.stdout()).toContain('RESULT: FAILED');
    });

    it(
      `apply, ${signal}, during the wait for the device to come back from its restart`,
      { timeout: 40_000 },
      async () => {
        const sim = await sims.start({ restartMs: 60_000 });
        const proc = start(['apply', stickFor(sim), ...engineArgs()]);
        await until(
          () => sim.requests().some((r) => r.method === 'PUT' && r.path.includes('/service/networking')),
          'the restart request',
          proc,
        );
        await new Promise((r) => setTimeout(r, 500));
        const sentence = await stopAndCheck(proc, signal);
        expect(sentence).toMatch(
          new RegExp(
            `^stopped by ${signal}: mp1 during step (\\d+)/(\\d+) "restart networking[^"]*", (?:step 1 was|steps 1-\\d+ were) sent and accepted, the networking restart was requested, so the device may be restarting with the new settings \\(not verified\\), (?:step \\d+ was|steps \\d+-\\d+ were) not sent$`,
          ),
        );
        // The report says the same of the device, and nothing was sent after the signal.
        expect(proc.stdout()).toContain('RESULT: FAILED');
        const afterRestart = sim.requests().filter((r) => r.method !== 'GET');
        expect(afterRestart.at(-1)?.path).toContain('/service/networking');
      },
    );
  }
});

describe('a signal ends validate within 2 s', () => {
  const running: RunningProcess[] = [];
  afterEach(async () => {
    for (const p of running.splice(0)) await p.stop('SIGKILL');
  });

  /** A stick of 1200 devices, each with its own password file: validate reads 1200 files. */
  function bigStick(): string {
    const dir = join(tempFolder('big-stick'), 'stick');
    mkdirSync(join(dir, 'secrets'), { recursive: true });
    const lines = ['version: 1', 'monitoring_points:'];
    for (let i = 0; i < 1200; i++) {
      lines.push(
        `  - name: mp${i}`,
        `    url: https://10.${Math.floor(i / 250)}.${i % 250}.1`,
        `    password_file: secrets/mp${i}.pw`,
        `    tls: { fingerprint_sha256: "${'AB:'.repeat(31)}AB" }`,
      );
      writeFileSync(join(dir, 'secrets', `mp${i}.pw`), `${PROFILE_ADMIN_PASSWORD}-${i}\n`);
    }
    writeFileSync(join(dir, 'mpprov.yaml'), `${lines.join('\n')}\n`);
    return dir;
  }

  /** True once the process holds one of the stick's password files open: it is reading the stick. */
  const readingSecrets = (pid: number | undefined, dir: string): boolean => {
    try {
      return readdirSync(`/proc/${pid}/fd`).some((fd) => {
        try {
          return readlinkSync(`/proc/${pid}/fd/${fd}`).startsWith(join(dir, 'secrets'));
        } catch {
          return false;
        }
      });
    } catch {
      return false;
    }
  };

  for (const signal of ['SIGTERM', 'SIGINT'] as const) {
    it(`validate, ${signal}, while it reads a stick of many files`, { timeout: 30_000 }, async () => {
      const dir = bigStick();
      const proc = startCli(['validate', dir]);
      running.push(proc);
      await until(() => readingSecrets(proc.child.pid, dir), 'validate to read the password files', proc);
      const sentence = await stopAndCheck(proc, signal);
      expect(sentence).toBe(`stopped by ${signal}: while checking ${dir}; validate sends nothing to any device`);
      expect(proc.stdout()).toBe('');
    });
  }
});
