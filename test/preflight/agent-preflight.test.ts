import { readFile, rename, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { assertRealBackendCanRun } from '../dot1x/real-lab.js';
import { makeWorld, readJobs, waitFor, waitForJobEnds, type AgentWorld } from '../daemon/agent-process.js';
import { useLabPki } from '../support/lab-pki.js';
import { PortLab } from './port-lab.js';
import { ADMIN_PASSWORD } from './preflight-stick.js';

/**
 * The agent with agent.yaml `preflight: {port}`: a profile's 802.1X is tried on the laptop's port
 * first; the switch's refusal ends the job before any request, and the job's log (the same writer
 * as usb.log) and its RESULT line say what the switch said. The agent runs in the lab's laptop namespace.
 */

const pki = useLabPki();
let lab: PortLab;
let world: AgentWorld;

beforeAll(async () => {
  assertRealBackendCanRun();
  lab = new PortLab();
  world = await makeWorld({
    agentYaml: (w) =>
      `version: 1\nmedia_roots: [${w.mediaRoot}]\nprofiles_dirs: [${w.profilesDir}]\nstate_dir: ${w.stateDir}\npreflight: { port: ${lab.laptopIf} }\n`,
  });
});
afterEach(async () => lab.stopDaemons());
afterAll(async () => {
  lab?.close();
  await world?.cleanup();
});

describe('the agent with a preflight port', () => {
  it(
    'a refused 802.1X password ends the job before any request, saying what the switch said',
    { timeout: 60_000 },
    async () => {
      await lab.startAuthenticator(pki.dir);
      const agent = lab.startCli(['run', '--agent-config', world.agentConfig], undefined, {
        JOURNAL_STREAM: '',
        NOTIFY_SOCKET: '',
        RUNTIME_DIRECTORY: join(world.dir, 'run'),
      });
      let output = '';
      agent.stdout?.on('data', (chunk: Buffer) => (output += chunk.toString()));
      agent.stderr?.on('data', (chunk: Buffer) => (output += chunk.toString()));
      const exited = new Promise((resolve) => agent.once('exit', resolve));
      const said = () => Promise.resolve(output);
      try {
        await waitFor(() => output.includes('watching media roots'), 15_000, 'the agent to start', said, exited);
        await writeFile(join(world.profilesDir, 'ca.pem'), pki.read('ca.pem'));
        await writeFile(
          join(world.profilesDir, '.lab.yaml.tmp'),
          [
            'version: 1',
            'monitoring_points:',
            '  - name: mp-lab',
            '    url: https://127.0.0.1:9',
            `    password: ${ADMIN_PASSWORD}`,
            '    tls: { insecure: true }',
            '    interfaces:',
            '      eth1:',
            '        ipv4: { method: dhcp }',
            '        dot1x: { eap: peap, inner: mschapv2, identity: alice, anonymous_identity: anonymous, password: "Wrong-Password-3", ca_cert: ca.pem }',
            '',
          ].join('\n'),
        );
        await rename(join(world.profilesDir, '.lab.yaml.tmp'), join(world.profilesDir, 'lab.yaml'));
        const [end] = await waitForJobEnds(world, 1);
        expect(end?.result).toBe('FAILED');
        const log = await readFile(join(world.stateDir, 'logs', `${end?.id ?? ''}.log`), 'utf8');
        const sentence = `preflight on ${lab.laptopIf} refused the stick, nothing was sent to any Monitoring Point: mp-lab eth1: 802.1X refused: RADIUS rejected the password of identity "alice" (MSCHAPv2 error 691)`;
        expect(log).toContain(sentence);
        expect(log).toMatch(/RESULT: FAILED .*RADIUS rejected the password/);
        expect((await readJobs(world.stateDir)).filter((r) => r.event === 'end')).toHaveLength(1);
        for (const secret of ['Wrong-Password-3', ADMIN_PASSWORD]) {
          expect(log).not.toContain(secret);
          expect(output).not.toContain(secret);
        }
      } finally {
        agent.kill('SIGTERM');
        await exited;
      }
    },
  );
});
