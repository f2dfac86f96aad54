import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { ServiceSimulator } from '../../src/simulator/service/index.js';
import { expectNoSecret, startService, TOKEN } from '../service/service-fixtures.js';
import { rawCaller } from '../simulator/service-rig.js';
import { runCli } from '../support/run-cli.js';
import { tempFolder } from '../support/temp-folder.js';

/** `mpprov observe --once` and `mpprov status` as an operator runs them: the built CLI, agent.yaml, the simulated service over HTTPS. */

const ALERTS = 'http://127.0.0.1:9/hooks/netteam-7f3c2a9e1b';
let service: ServiceSimulator;

beforeAll(async () => {
  service = await startService({});
});
afterAll(async () => service?.close());

function agentYaml(): { file: string; state: string } {
  const dir = tempFolder('observe-agent');
  const state = join(dir, 'state');
  mkdirSync(state, { mode: 0o700 });
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
      '    listen: 127.0.0.1:18472',
      '    public_url: https://prov.example.net:8472/mpprov-events/',
      '',
    ].join('\n'),
  );
  return { file, state };
}

describe('mpprov observe on the command line', () => {
  it('--once prints what it found and would do, sends nothing, and refuses with exit 1 when a kind goes elsewhere', async () => {
    const agent = agentYaml();
    service.clearRequests();
    const dry = await runCli(['observe', '--once', '--agent-config', agent.file]);
    expect(dry.stderr).toBe('');
    expect(dry.stdout).toBe(
      'found: no configuration of this user\n' +
        'would: registering https://prov.example.net:8472/mpprov-events/ for seqEvents and sqaEvents (dry run: nothing sent)\n',
    );
    expect(dry.code).toBe(0);
    expect(service.requestCounts()).toEqual({ 'observer-list': 1 });

    const caller = rawCaller(service, TOKEN);
    const posted = await caller.call('POST', '/api/v3/observer', { body: { url: ALERTS, seqEvents: true } });
    await caller.close();
    expect(posted.status).toBe(200);
    const refused = await runCli(['observe', '--agent-config', agent.file]);
    expect(refused.stdout).toBe(
      `seqEvents already goes to ${ALERTS}, another server of this user: not registering (--take-over seqEvents moves it here)\n`,
    );
    expect(refused.code).toBe(1);
    expect(service.observers().map((o) => o.url)).toEqual([ALERTS]);
    expectNoSecret([dry.stdout, dry.stderr, refused.stdout, refused.stderr]);
  });

  it('mpprov status shows the registration once the receiver has written it', async () => {
    const agent = agentYaml();
    writeFileSync(
      join(agent.state, 'observe-status.json'),
      JSON.stringify({
        publicUrl: 'https://prov.example.net:8472/mpprov-events/',
        registered: true,
        blacklisted: false,
        lastEventAt: '2026-11-28T12:00:00.000Z',
        checkedAt: '2026-11-28T12:01:00.000Z',
      }),
    );
    const status = await runCli(['status', '--agent-config', agent.file]);
    expect(status.code).toBe(0);
    expect(status.stdout).toContain(
      'events receiver: https://prov.example.net:8472/mpprov-events/  registered  not blacklisted  last event 2026-11-28T12:00:00.000Z  checked 2026-11-28T12:01:00.000Z\n',
    );
  });
});
