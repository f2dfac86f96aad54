import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { expectNoSecret } from '../service/service-fixtures.js';
import { rawCaller } from '../simulator/service-rig.js';
import { PROFILE_ADMIN_PASSWORD } from '../support/stick-workspace.js';
import { runCli, useProcesses } from '../support/run-cli.js';
import { usePki } from '../support/test-pki.js';
import { freePort, startRelay } from './observe-rig.js';
import { agentYaml, fleetStick, restartDevice, startSimFleet, until } from './observe-processes.js';

/**
 * Blacklisting noticed from silence, with real processes: `mpprov observe` (check_s 3600, so the
 * periodic check cannot be what notices) listening over HTTPS, is blacklisted while a TCP relay in front of it is cut;
 * then `mpprov apply` provisions an MP whose AVAILABLE event the simulator drops. The apply's poll
 * round confirms the MP, no event follows, and the receiver checks and repairs its registration
 * at once; the user's other configurations come back exactly as they were.
 */

const processes = useProcesses();
const pki = usePki();
const ca = pki.ca('silence-events-ca', 'mpprov test events CA');
const receiverTls = pki.issue('silence-receiver', '127.0.0.1', ca, 'server', { san: 'IP:127.0.0.1' });
const relays: { cut(): Promise<void> }[] = [];
afterAll(async () => {
  for (const r of relays) await r.cut();
});

describe('mpprov observe notices its blacklisting from a missed event', () => {
  it('repairs a blacklisted registration (check_s 3600) after an apply whose event was dropped, other configurations intact', async () => {
    const fleet = await startSimFleet(processes, {
      devices: 5,
      hostname: 'quiet',
      password: PROFILE_ADMIN_PASSWORD,
      reconnectMs: 3_000,
      extra: ['--service-events-ca', ca.cert],
    });
    const listen = await freePort();
    const relay = await startRelay(listen);
    relays.push(relay);
    const publicUrl = `https://127.0.0.1:${relay.port}/mpprov-events/`;
    const agent = agentYaml(fleet, {
      listen: `127.0.0.1:${listen}`,
      publicUrl,
      checkS: 3600,
      tls: { cert: receiverTls.cert, key: receiverTls.key },
    });

    // The user's other integrations: kinds the receiver does not want, so it registers beside them.
    const caller = rawCaller({ url: fleet.service.url, caPem: fleet.service.ca_pem }, fleet.service.token);
    for (const body of [
      { url: 'http://127.0.0.1:9/alerts/netteam-4c1d', webAlertEvents: true },
      { url: 'http://127.0.0.1:9/changes/cmdb-77aa', networkChangeEvents: true, testEvents: true },
    ])
      expect((await caller.call('POST', '/api/v3/observer', { body })).status).toBe(200);
    const others = (await fleet.observers()).map((o) => JSON.stringify(o));
    expect(others).toHaveLength(2);

    const observe = await processes.startCli(['observe', '--agent-config', agent.file]);
    expect(observe.firstLine, observe.stderr()).toBe(
      `listening on 127.0.0.1:${listen} for events posted to ${publicUrl}`,
    );
    const own = async () => (await fleet.controlObservers()).find((o) => o.url.startsWith(publicUrl));
    await until(async () => (await own()) !== undefined);

    // The receiver unreachable: five restarts make ten unanswered events, and the service blacklists it.
    await relay.cut();
    await Promise.all(fleet.devices.map((d) => restartDevice(d)));
    await until(async () => (await own())?.blacklisted === true);
    await relay.mend();
    expect(
      (await fleet.control('/_sim/service/event-faults', { method: 'POST', body: { faults: ['drop'] } }))['success'],
    ).toBe(true);
    const statusOf = async (hostname: string) =>
      ((await caller.get(`/api/v3/appliance?hostname=${hostname}`)).json as { connectionStatus: string }[])[0]
        ?.connectionStatus;
    await until(async () => (await statusOf('quiet-1')) === 'AVAILABLE', 30_000, 1_000);

    const run = await runCli(['apply', fleetStick(fleet, [0]), '--agent-config', agent.file]);
    expect(run.stdout).toMatch(/\[quiet-1\] connected to the service \(\d+\.\d s\)/);
    expect(run.code).toBe(0);
    expect(readFileSync(join(agent.state, 'poll-confirmations.jsonl'), 'utf8')).toMatch(/^\{"hostname":"quiet-1",/);

    // Within the grace after the apply's confirming round, not check_s: the early check repairs it.
    await until(async () => (await own())?.blacklisted === false, 20_000);
    expect(observe.stderr()).toContain(
      'mpprov observe: no event came for quiet-1, which the service confirmed AVAILABLE: checking the registration now\n',
    );
    expect(observe.stderr()).toContain(`mpprov observe: the service blacklisted ${publicUrl}: repairing\n`);
    const after = await fleet.observers();
    expect(after.filter((o) => !o.url.startsWith(publicUrl)).map((o) => JSON.stringify(o))).toEqual(others);
    expect(after).toHaveLength(3);

    await caller.close();
    expect((await observe.stop()).code).toBe(0);
    const stateFiles = readdirSync(agent.state).map((f) => readFileSync(join(agent.state, f), 'utf8'));
    expectNoSecret([observe.stdout(), observe.stderr(), run.stdout, run.stderr, ...stateFiles], [fleet.service.token]);
  });
});
