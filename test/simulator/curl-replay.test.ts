import { writeFile } from 'node:fs/promises';
import { beforeAll, describe, expect, it } from 'vitest';
import { useLabPki } from '../support/lab-pki.js';
import { useSimulator } from '../support/simulator-fixture.js';
import { curl, waitForPhase } from './sim-client.js';

/**
 * The vendor's documented calls, replayed with the real curl binary: upload with an empty Expect
 * header, a flat JSON POST, a restart with `-d {}` and its outage, and a DELETE with ?family=.
 */

const pki = useLabPki();
// 1500 ms of outage: long enough for curl to meet a refused port between the 202 and the return.
// No reset between tests: the DELETE replay removes the stanza the POST replay made active.
const { sim } = useSimulator({ restartMs: 1500, serviceRateLimit: false }, { reset: false });
let auth: string[];

beforeAll(() => {
  auth = ['-k', '-u', `${sim.username}:${sim.password}`];
});

const json = (body: string): unknown => JSON.parse(body);

async function restartAndWait(): Promise<void> {
  const restart = await curl([
    ...auth,
    '-X',
    'PUT',
    '-H',
    'Content-Type: application/json',
    '-d',
    '{}',
    `${sim.apiUrl}/service/networking/?action=restart`,
  ]);
  expect(restart.status).toBe(202);
  expect(json(restart.body)).toEqual({ success: true });
  // During the outage curl cannot connect at all (exit code 7, "Couldn't connect to server").
  await waitForPhase(sim, 'restarting');
  const during = await curl([...auth, `${sim.apiUrl}/interface/?config_state=active`]);
  expect(during.exitCode).toBe(7);
  await waitForPhase(sim, 'up');
}

describe('the documented curl calls', () => {
  it('uploads a CA certificate with -H "Expect:" -F wpa_ca_cert=@ca.pem', async () => {
    const result = await curl([
      ...auth,
      '-H',
      'Expect:',
      '-F',
      `wpa_ca_cert=@${pki.path('ca.pem')}`,
      `${sim.apiUrl}/interface/file/`,
    ]);
    expect(result.status).toBe(200);
    expect(json(result.body)).toEqual({ success: true, files: { wpa_ca_cert: 'ca.pem' } });
  });

  it('is refused with 417 when curl sends Expect: 100-continue', async () => {
    const result = await curl([
      ...auth,
      '-H',
      'Expect: 100-continue',
      '-F',
      `wpa_ca_cert=@${pki.path('ca.pem')}`,
      `${sim.apiUrl}/interface/file/`,
    ]);
    expect(result.status).toBe(417);
  });

  it('posts a flat stanza, restarts networking (202, then refused), and finds it active', async () => {
    const stanza = {
      name: 'eth1',
      family: 'inet',
      method: 'static',
      address: '192.0.2.10',
      netmask: '255.255.255.0',
      gateway: '192.0.2.1',
    };
    const post = await curl([
      ...auth,
      '-X',
      'POST',
      '-H',
      'Content-Type: application/json',
      '-d',
      JSON.stringify(stanza),
      `${sim.apiUrl}/interface/`,
    ]);
    expect(post.status).toBe(200);
    expect(json(post.body)).toEqual({ success: true });
    const pending = await curl([...auth, `${sim.apiUrl}/interface/eth1/?config_state=pending`]);
    expect(json(pending.body)).toMatchObject({
      interface: { config_state: 'pending', families: { inet: { address: '192.0.2.10' } } },
    });
    expect((await curl([...auth, `${sim.apiUrl}/interface/eth1/?config_state=active`])).status).toBe(404);

    await restartAndWait();

    const active = await curl([...auth, `${sim.apiUrl}/interface/eth1/?config_state=active`]);
    expect(active.status).toBe(200);
    expect(json(active.body)).toMatchObject({
      interface: { config_state: 'active', families: { inet: { method: 'static', address: '192.0.2.10' } } },
    });
  });

  it('deletes with DELETE .../interface/eth1/?family=inet; the stanza is gone after the restart', async () => {
    const deleted = await curl([...auth, '-X', 'DELETE', `${sim.apiUrl}/interface/eth1/?family=inet`]);
    expect(deleted.status).toBe(200);
    expect(json(deleted.body)).toEqual({ success: true });
    const pending = await curl([...auth, `${sim.apiUrl}/interface/eth1/?config_state=pending`]);
    expect(json(pending.body)).toMatchObject({ interface: { families: { inet: null } } });

    await restartAndWait();

    expect((await curl([...auth, `${sim.apiUrl}/interface/eth1/?config_state=active`])).status).toBe(404);
  });

  it('verifies the device with --cacert instead of -k', async () => {
    const caFile = pki.path('device.pem');
    await writeFile(caFile, sim.certificatePem);
    const verified = await curl([
      '--cacert',
      caFile,
      '-u',
      `${sim.username}:${sim.password}`,
      `${sim.apiUrl}/appliance/capability`,
    ]);
    expect(verified.status).toBe(200);
    const unverified = await curl(['-u', `${sim.username}:${sim.password}`, `${sim.apiUrl}/appliance/capability`]);
    expect(unverified.exitCode).toBe(60);
  });

  it('answers 401 to curl without -u', async () => {
    const result = await curl(['-k', `${sim.apiUrl}/interface/?config_state=active`]);
    expect(result.status).toBe(401);
  });
});
