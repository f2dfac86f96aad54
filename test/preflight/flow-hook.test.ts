import { spawn, type ChildProcess } from 'node:child_process';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { loadAgentConfig } from '../../src/config/index.js';
import { assertRealBackendCanRun } from '../dot1x/real-lab.js';
import { useLabPki } from '../support/lab-pki.js';
import { tempFolder } from '../support/temp-folder.js';
import { PEAP_PASSWORD, PortLab, runInLaptop } from './port-lab.js';
import { ADMIN_PASSWORD } from './preflight-stick.js';

/**
 * `plan --preflight IFACE` and agent.yaml `preflight: {port}`: the stick's 802.1X is tried on the
 * laptop's port first, and a refusal stops the run before any request to the Monitoring Point.
 * The "MP" is a TCP listener in the laptop's namespace that records every connection.
 */

const pki = useLabPki();
let lab: PortLab;
let listener: ChildProcess;
let mpPort = 0;
const connections: string[] = [];

beforeAll(async () => {
  assertRealBackendCanRun();
  lab = new PortLab();
  listener = spawn(
    'nsenter',
    [
      `--net=/run/netns/${lab.laptopNs}`,
      process.execPath,
      '-e',
      "require('net').createServer((s) => { console.log('CONNECT'); s.destroy(); }).listen(0, '127.0.0.1', function () { console.log('PORT ' + this.address().port); });",
    ],
    { stdio: ['ignore', 'pipe', 'inherit'] },
  );
  mpPort = await new Promise<number>((resolve) => {
    createInterface({ input: listener.stdout as NodeJS.ReadableStream }).on('line', (line) => {
      if (line.startsWith('PORT ')) resolve(Number(line.slice(5)));
      else connections.push(line);
    });
  });
});
afterEach(async () => lab.stopDaemons());
afterAll(() => {
  listener?.kill('SIGKILL');
  lab?.close();
});

function stickAndAgent(password: string, agentYaml = ''): { stick: string; agent: string } {
  const dir = tempFolder('flow-stick');
  writeFileSync(join(dir, 'ca.pem'), pki.read('ca.pem'));
  writeFileSync(
    join(dir, 'mpprov.yaml'),
    [
      'version: 1',
      'monitoring_points:',
      '  - name: mp-lab',
      `    url: https://127.0.0.1:${mpPort}`,
      `    password: ${ADMIN_PASSWORD}`,
      '    tls: { insecure: true }',
      '    interfaces:',
      '      eth1:',
      '        ipv4: { method: dhcp }',
      `        dot1x: { eap: peap, inner: mschapv2, identity: alice, anonymous_identity: anonymous, password: "${password}", ca_cert: ca.pem }`,
      '',
    ].join('\n'),
  );
  const agent = join(tempFolder('flow-agent'), 'agent.yaml');
  writeFileSync(agent, `state_dir: ${tempFolder('flow-state')}\n${agentYaml}`);
  return { stick: dir, agent };
}

describe('the flow with a preflight', () => {
  it('plan --preflight: the switch refuses the password, the run stops before any request to the MP', async () => {
    await lab.startAuthenticator(pki.dir);
    const { stick, agent } = stickAndAgent('Wrong-Password-2');
    const run = await runInLaptop(lab, ['plan', stick, '--agent-config', agent, '--preflight', lab.laptopIf]);
    expect(run.code).toBe(1);
    expect(run.stdout).toContain(
      `preflight on ${lab.laptopIf} refused the stick, nothing was sent to any Monitoring Point: mp-lab eth1: 802.1X refused: RADIUS rejected the password of identity "alice" (MSCHAPv2 error 691)`,
    );
    expect(connections).toEqual([]);
    expect(run.stdout + run.stderr).not.toContain(ADMIN_PASSWORD);
  });

  it('agent.yaml preflight.port: the same gate; an accepted port lets plan go on to the MP', async () => {
    await lab.startAuthenticator(pki.dir);
    await lab.startDhcp();
    const { stick, agent } = stickAndAgent(PEAP_PASSWORD, `preflight: { port: ${lab.laptopIf} }\n`);
    const run = await runInLaptop(lab, ['plan', stick, '--agent-config', agent]);
    expect(run.stdout).toContain(`preflight on ${lab.laptopIf}: the switch accepted mp-lab eth1 (PEAP-MSCHAPv2)`);
    // The listener is no device: plan fails there, after the gate let it through.
    expect(connections.length).toBeGreaterThan(0);
    expect(run.code).toBe(1);
    for (const secret of [PEAP_PASSWORD, ADMIN_PASSWORD]) expect(run.stdout + run.stderr).not.toContain(secret);
  });

  it('agent.yaml reads preflight.port and refuses an empty one', async () => {
    const ok = join(tempFolder('flow-agent'), 'agent.yaml');
    writeFileSync(ok, 'preflight: { port: enp0s31f6 }\n');
    expect((await loadAgentConfig(ok)).config.preflight).toEqual({ port: 'enp0s31f6' });
    const bad = join(tempFolder('flow-agent'), 'agent.yaml');
    writeFileSync(bad, 'preflight: { port: "" }\n');
    expect((await loadAgentConfig(bad)).problems.map((p) => p.path)).toEqual(['preflight.port']);
  });
});
