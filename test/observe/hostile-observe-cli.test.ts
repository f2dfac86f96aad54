import { mkdirSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { ServiceSimulator } from '../../src/simulator/service/index.js';
import { expectNoSecret, OTHER_TOKEN, startService, TOKEN } from '../service/service-fixtures.js';
import { rawCaller } from '../simulator/service-rig.js';
import { runCli, startNode, cliPath } from '../support/run-cli.js';
import { tempFolder } from '../support/temp-folder.js';
import { freePort } from './observe-rig.js';

/**
 * `mpprov observe` as a careless operator and a crash meet it, the built CLI against the simulated
 * service over HTTPS: a state folder that is not there, and a receiver SIGKILLed between its DELETE
 * and the re-posts, then started again.
 */

const ALERTS = 'http://127.0.0.1:9/hooks/netteam-7f3c2a9e1b';
const TICKETS = 'http://127.0.0.1:9/hooks/tickets-41d0';
let service: ServiceSimulator;

beforeAll(async () => {
  service = await startService({});
});
afterAll(async () => service?.close());

function agentYaml(port: number, makeState = true): { file: string; state: string } {
  const dir = tempFolder('observe-hostile-cli');
  const state = join(dir, 'state');
  if (makeState) mkdirSync(state, { mode: 0o700 });
  writeFileSync(join(dir, 'service.token'), `${TOKEN}\n`, { mode: 0o600 });
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
      '  events:',
      `    listen: 127.0.0.1:${port}`,
      `    public_url: https://127.0.0.1:${port}/mpprov-events/`,
      '',
    ].join('\n'),
  );
  return { file, state };
}

const until = async (check: () => boolean): Promise<void> => {
  for (let i = 0; i < 400 && !check(); i++) await new Promise((r) => setTimeout(r, 25));
  expect(check()).toBe(true);
};

describe('mpprov observe, a careless operator and a crash', () => {
  it('says in one line that the state folder is missing, without a stack', async () => {
    const agent = agentYaml(await freePort(), false);
    const run = await runCli(['observe', '--agent-config', agent.file]);
    expect(run.code).toBe(1);
    expect(run.stdout).toBe('');
    expect(run.stderr).toBe(
      `mpprov observe: open ${agent.state}/observe-path failed (ENOENT): check state_dir ${agent.state}\n`,
    );
  });

  it('SIGKILLed between DELETE and the re-posts, puts every other configuration back byte for byte on its next start', async () => {
    const caller = rawCaller(service, TOKEN);
    const other = rawCaller(service, OTHER_TOKEN);
    try {
      await caller.call('DELETE', '/api/v3/observer');
      await caller.call('POST', '/api/v3/observer', { body: { url: ALERTS, seqEvents: true, webAlertEvents: true } });
      await caller.call('POST', '/api/v3/observer', { body: { url: TICKETS, networkChangeEvents: true } });
      const tickets = () => JSON.stringify(service.observers().filter((o) => o.url === TICKETS));
      const ticketsBefore = tickets();
      const otherBefore = (await other.call('GET', '/api/v3/observer')).text;
      const agent = agentYaml(await freePort());
      // Every answer slow: the receiver is still waiting for its DELETE's answer when it is killed.
      service.clearRequests();
      service.setFaults({ latencyMs: 1_500 });
      const first = startNode([cliPath, 'observe', '--take-over', 'seqEvents', '--agent-config', agent.file]);
      await until(() => (service.requestCounts()['observer-delete'] ?? 0) > 0);
      await first.stop('SIGKILL');
      service.clearFaults();
      expect(service.observers()).toEqual([]);
      expect(readdirSync(agent.state)).toContain('observers-pending.json');

      const second = startNode([cliPath, 'observe', '--agent-config', agent.file]);
      try {
        await until(() => service.observers().some((o) => o.url.includes('/mpprov-events/')));
        await until(() => !readdirSync(agent.state).includes('observers-pending.json'));
        expect(tickets()).toBe(ticketsBefore);
        expect(service.observers().find((o) => o.url === ALERTS)).toMatchObject({
          webAlertEvents: true,
          seqEvents: false,
        });
        expect((await other.call('GET', '/api/v3/observer')).text).toBe(otherBefore);
      } finally {
        await second.stop('SIGTERM');
      }
      expect(second.stderr()).toBe('');
      expect(second.stdout()).toContain('posted back the configurations a stopped rebuild had left\n');
      const state = readdirSync(agent.state).map((n) => readFileSync(join(agent.state, n), 'utf8'));
      expectNoSecret([first.output(), second.output(), ...state]);
    } finally {
      await caller.close();
      await other.close();
    }
  });
});
