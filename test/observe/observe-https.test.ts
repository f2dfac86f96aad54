import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { expectNoSecret } from '../service/service-fixtures.js';
import { useProcesses } from '../support/run-cli.js';
import { PROFILE_ADMIN_PASSWORD } from '../support/stick-workspace.js';
import { usePki } from '../support/test-pki.js';
import { freePort } from './observe-rig.js';
import { agentYaml, restartDevice, startSimFleet, until, type SimFleet } from './observe-processes.js';

/**
 * `mpprov observe` over HTTPS end to end, real processes: the receiver serves its own certificate
 * and key from the test PKI; `mpprov simulate --service` delivers when `--service-events-ca`
 * trusts that CA, and fails every delivery when nothing does (then blacklists the receiver, which
 * notices at its next check and says so).
 */

const processes = useProcesses();
const pki = usePki();
const ca = pki.ca('https-events-ca', 'mpprov test events CA');
const receiverTls = pki.issue('https-receiver', '127.0.0.1', ca, 'server', { san: 'IP:127.0.0.1' });

interface Delivery {
  url: string;
  outcome: string;
  detail?: string;
  blacklisted?: boolean;
}

async function startReceiver(fleet: SimFleet, checkS: number) {
  const listen = await freePort();
  const publicUrl = `https://127.0.0.1:${listen}/mpprov-events/`;
  const agent = agentYaml(fleet, {
    listen: `127.0.0.1:${listen}`,
    publicUrl,
    checkS,
    tls: { cert: receiverTls.cert, key: receiverTls.key },
  });
  const observe = await processes.startCli(['observe', '--agent-config', agent.file]);
  expect(observe.firstLine, observe.stderr()).toBe(
    `listening on 127.0.0.1:${listen} for events posted to ${publicUrl}`,
  );
  const own = async () => (await fleet.controlObservers()).find((o) => o.url.startsWith(publicUrl));
  await until(async () => (await own()) !== undefined);
  return { agent, observe, publicUrl, own };
}

const deliveries = async (fleet: SimFleet) =>
  (await fleet.control('/_sim/service/deliveries'))['deliveries'] as Delivery[];

describe('mpprov observe over HTTPS', () => {
  it('receives the events of a restart from a service that trusts its CA (--service-events-ca) into events.jsonl', async () => {
    const fleet = await startSimFleet(processes, {
      devices: 1,
      hostname: 'tls',
      password: PROFILE_ADMIN_PASSWORD,
      reconnectMs: 300,
      extra: ['--service-events-ca', ca.cert],
    });
    const { agent, observe, publicUrl } = await startReceiver(fleet, 60);
    const device = fleet.devices[0];
    expect(device).toBeDefined();
    if (device === undefined) return;
    await restartDevice(device);
    const file = join(agent.state, 'events.jsonl');
    const logged = () =>
      (existsSync(file) ? readFileSync(file, 'utf8') : '')
        .split('\n')
        .filter((l) => l !== '')
        .map((l) => JSON.parse(l) as { received: string; event: Record<string, unknown> });
    await until(() => logged().length >= 2);
    const name = fleet.service.hostnames[0];
    expect(logged().map((l) => `${String(l.event['sequencerName'])} ${String(l.event['sequencerStatus'])}`)).toEqual([
      `${name} UNAVAILABLE`,
      `${name} AVAILABLE`,
    ]);
    const sent = await deliveries(fleet);
    expect(sent.map((d) => d.outcome)).toEqual(['answered', 'answered']);
    for (const d of sent) expect(d.url.startsWith(publicUrl)).toBe(true);
    expect((await observe.stop()).code).toBe(0);
    const stateFiles = readdirSync(agent.state).map((f) => readFileSync(join(agent.state, f), 'utf8'));
    expectNoSecret([observe.stdout(), observe.stderr(), ...stateFiles], [fleet.service.token]);
  });

  it('is blacklisted by a service that does not trust its CA after 10 failed deliveries, and says so at its check', async () => {
    const fleet = await startSimFleet(processes, {
      devices: 5,
      hostname: 'untrusted',
      password: PROFILE_ADMIN_PASSWORD,
      reconnectMs: 300,
    });
    const { agent, observe, publicUrl, own } = await startReceiver(fleet, 2);
    await Promise.all(fleet.devices.map((d) => restartDevice(d)));
    await until(async () => (await deliveries(fleet)).some((d) => d.blacklisted === true));
    const sent = (await deliveries(fleet)).filter((d) => d.outcome !== 'never sent');
    expect(sent.length).toBeGreaterThanOrEqual(10);
    expect(sent.slice(0, 10).map((d) => d.outcome)).toEqual(new Array(10).fill('failed'));
    expect(sent[9]?.blacklisted).toBe(true);
    // The certificate did not verify (Node's code for it), not a refused connection.
    expect(sent[0]?.detail).toMatch(/CERT|SIGNATURE|ISSUER/);
    // Nothing reached the receiver: the TLS handshake failed before any request.
    expect(readdirSync(agent.state)).not.toContain('events.jsonl');
    await until(() => observe.stderr().includes(`mpprov observe: the service blacklisted ${publicUrl}: repairing\n`));
    // Repaired (read all, delete, post back): registered again and not blacklisted, until the next 10 failures.
    await until(async () => (await own())?.blacklisted === false);
    expect((await observe.stop()).code).toBe(0);
    expectNoSecret([observe.stdout(), observe.stderr()], [fleet.service.token]);
  });
});
