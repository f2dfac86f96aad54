import { mkdir, readFile, stat, writeFile } from 'node:fs/promises';
import { basename, dirname, join } from 'node:path';
import { PassThrough } from 'node:stream';
import { fileURLToPath } from 'node:url';
import { describe, expect, it, vi } from 'vitest';
import { createDeviceLocks } from '../../src/agent/index.js';
// The job and the state store are the daemon's insides (not in agent/index.ts): this test drives
// one job in-process to count what it reads, with everything else real.
import { type JobEnvironment, type JobRequest, startJob } from '../../src/agent/run-job.js';
import { openStateStore } from '../../src/agent/state-store.js';
import { defaultAgentConfig } from '../../src/config/index.js';
import { Redactor } from '../../src/core/index.js';
import { fileStickReader, type StickReader } from '../../src/ingest/index.js';
import { createAgentLogger } from '../../src/report/agent-logger.js';
import { createWriteQueues } from '../../src/report/index.js';
import type { SimulatorHandle } from '../../src/simulator/index.js';
import { secretForms } from '../support/secret-forms.js';
import { useSimulators } from '../support/simulator-fixture.js';
import { tempFolder } from '../support/temp-folder.js';
import { allFiles } from './agent-process.js';

/**
 * Every YAML parse in this process, counted on the way to the real parser: parseDocument, and the
 * Composer the yielding parser drives itself (the library's own parseDocument builds its Composer
 * inside the module, past this mock, so no parse counts twice).
 */
const parses = vi.hoisted(() => ({ count: 0 }));
vi.mock('yaml', async (importOriginal) => {
  const real = await importOriginal<typeof import('yaml')>();
  return {
    ...real,
    parseDocument: (...args: Parameters<typeof real.parseDocument>) => {
      parses.count += 1;
      return real.parseDocument(...args);
    },
    Composer: class extends real.Composer {
      constructor(...args: ConstructorParameters<typeof real.Composer>) {
        super(...args);
        parses.count += 1;
      }
    },
  };
});

const RADIUS_CA = fileURLToPath(new URL('../../profiles/certs/radius-ca.pem', import.meta.url));
/** Secrets made of ordinary words: the admin password (from a file) and the PEAP password (inline). */
const ADMIN = 'correct horse battery staple';
const PEAP = 'use a gateway, Mallory!';

const formsOf = secretForms;

function stickYaml(sim: SimulatorHandle, gateway: string): string {
  return `version: 1
monitoring_points:
  - name: mp1
    url: ${sim.url}
    password_file: secrets/admin.pw
    tls: { fingerprint_sha256: "${sim.fingerprintSha256}" }
    interfaces:
      eth1:
        ipv4: { method: static, address: 192.0.2.10/24, gateway: ${gateway} }
        dot1x: { eap: peap, inner: mschapv2, identity: mp01@corp.example, password: "${PEAP}", ca_cert: certs/radius-ca.pem }
`;
}

const sims = useSimulators();

describe("the daemon's job", () => {
  it(
    'reads each stick file once, parses its YAML once, and writes no secret in any form',
    { timeout: 60_000 },
    async () => {
      const sim = await sims.start({ restartMs: 200, password: ADMIN });
      const dir = tempFolder('mpprov-job');
      const root = join(dir, 'MPSTICK');
      const write = async (name: string, content: string | Buffer): Promise<void> => {
        await mkdir(dirname(join(root, name)), { recursive: true });
        await writeFile(join(root, name), content);
      };
      await write('secrets/admin.pw', `${ADMIN}\n`);
      await write('certs/radius-ca.pem', await readFile(RADIUS_CA));

      // Counts what the job reads through its seam.
      const reads: string[] = [];
      const reader: StickReader = {
        readConfigFile: (file) => {
          reads.push(`config ${basename(file)}`);
          return fileStickReader.readConfigFile(file);
        },
        readReferencedFile: (base, name) => {
          reads.push(`file ${name}`);
          return fileStickReader.readReferencedFile(base, name);
        },
      };
      const redactor = new Redactor();
      const journal = new PassThrough();
      let journalText = '';
      journal.on('data', (chunk: Buffer) => (journalText += chunk.toString()));
      const agent = { ...defaultAgentConfig(), stateDir: join(dir, 'state'), restartTimeoutMs: 20_000 };
      const env: JobEnvironment = {
        agent,
        state: await openStateStore(agent.stateDir, redactor),
        logger: createAgentLogger({ level: 'debug', redactor, stream: journal, env: {} }),
        redactor,
        reader,
        locks: createDeviceLocks(),
        signal: new AbortController().signal,
        stopReason: () => undefined,
        hostname: 'laptop',
        version: '0.0.0-test',
        stickQueue: createWriteQueues(),
      };
      const runJob = async (id: string, gateway: string) => {
        await write('mpprov.yaml', stickYaml(sim, gateway));
        reads.length = 0;
        parses.count = 0;
        const request: JobRequest = {
          kind: 'stick',
          root,
          configName: 'mpprov.yaml',
          label: 'MPSTICK',
          device: (await stat(root)).dev,
          configSha256: '',
        };
        const end = await startJob(id, request, env).done;
        return { end, reads: [...reads].sort(), parses: parses.count };
      };

      // A stick with a mistake: its one problem reaches usb.log word for word.
      const invalid = await runJob('j20260101-000000-0001', '192.0.3.1');
      expect(invalid.end.conclusion.word).toBe('FAILED');
      // A valid one: provisioned.
      const valid = await runJob('j20260101-000000-0002', '192.0.2.1');
      expect(valid.end.conclusion.word).toBe('CHANGED');

      // Each file once through the job's seam, and one YAML parse per job: nothing loads the stick twice.
      const once = ['config mpprov.yaml', 'file certs/radius-ca.pem', 'file secrets/admin.pw'];
      expect([invalid.reads, invalid.parses]).toEqual([once, 1]);
      expect([valid.reads, valid.parses]).toEqual([once, 1]);

      const usbLog = await readFile(join(root, 'usb.log'), 'utf8');
      expect(usbLog).toContain(
        "problem: mpprov.yaml:9:66  monitoring_points[0].interfaces.eth1.ipv4.gateway  gateway 192.0.3.1 is outside the subnet of 192.0.2.10/24  (use a gateway inside the interface's subnet, or correct the prefix length)",
      );
      // eth1 is static with 802.1X: its authorization is not visible through the Admin API, and said so.
      expect(usbLog).toContain(
        'RESULT: CHANGED  mp1: changed, 802.1X authorization of eth1 inet not visible through the Admin API (check the switch port)  [j20260101-000000-0002]',
      );

      await env.logger.close();
      const outputs = new Map<string, Buffer>([
        ['journal', Buffer.from(journalText)],
        ...(await allFiles(root)),
        ...(await allFiles(agent.stateDir)),
      ]);
      expect([...outputs.keys()].map((k) => basename(k)).sort()).toEqual(
        expect.arrayContaining([
          'journal',
          'usb.log',
          'mpprov-result.json',
          'jobs.jsonl',
          'secrets-record.json',
          'j20260101-000000-0002.log',
        ]),
      );
      const searched = [ADMIN, PEAP].flatMap(formsOf);
      expect(searched.length).toBeGreaterThanOrEqual(14);
      const found: string[] = [];
      for (const [name, content] of outputs) {
        // The stick's own input files hold the secrets, as the network team wrote them.
        if (name === join(root, 'mpprov.yaml') || name === join(root, 'secrets/admin.pw')) continue;
        for (const form of searched) if (content.includes(form)) found.push(`${form} in ${name}`);
      }
      expect(found).toEqual([]);
    },
  );
});
