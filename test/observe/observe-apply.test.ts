import { describe, expect, it } from 'vitest';
import { EVENTS_ROUND_MS } from '../../src/apply/service-side.js';
import { DEFAULT_TIMING } from '../../src/service/service-watch.js';
import { expectNoSecret } from '../service/service-fixtures.js';
import { runCli, useProcesses } from '../support/run-cli.js';
import { PROFILE_ADMIN_PASSWORD } from '../support/stick-workspace.js';
import { usePki } from '../support/test-pki.js';
import { freePort } from './observe-rig.js';
import { agentYaml, fleetStick, startSimFleet, until } from './observe-processes.js';

/**
 * Events through a full apply, every part a real process: `mpprov simulate` (4 MPs, each in an
 * organization of its own, so a polling round costs one request per MP), `mpprov observe` over
 * HTTPS, and `mpprov apply` of a stick with the 4 MPs and `service.events` in agent.yaml. Each
 * MP's wait ends on its AVAILABLE event, confirmed by one request, long before the fallback round.
 */

const processes = useProcesses();
const pki = usePki();
const ca = pki.ca('apply-events-ca', 'mpprov test events CA');
const receiverTls = pki.issue('apply-receiver', '127.0.0.1', ca, 'server', { san: 'IP:127.0.0.1' });
const MPS = 4;

interface JsonLine {
  type: string;
  device?: string;
  outcome?: { kind: string; polls: number; waitedMs: number; sentence: string };
  devices?: { device: string; outcome: string; service?: { kind: string; sentence: string } }[];
}

describe('mpprov apply with mpprov observe on the same host', () => {
  it('ends each MP wait on its confirmed event, with far fewer appliance requests than polling', async () => {
    const fleet = await startSimFleet(processes, {
      devices: MPS,
      hostname: 'evented',
      password: PROFILE_ADMIN_PASSWORD,
      reconnectMs: 5_000,
      extra: ['--service-orgs', String(MPS), '--service-events-ca', ca.cert],
    });
    const listen = await freePort();
    const publicUrl = `https://127.0.0.1:${listen}/mpprov-events/`;
    const agent = agentYaml(fleet, {
      listen: `127.0.0.1:${listen}`,
      publicUrl,
      checkS: 60,
      tls: { cert: receiverTls.cert, key: receiverTls.key },
    });
    const observe = await processes.startCli(['observe', '--agent-config', agent.file]);
    expect(observe.firstLine, observe.stderr()).toBe(
      `listening on 127.0.0.1:${listen} for events posted to ${publicUrl}`,
    );
    await until(async () => (await fleet.controlObservers()).some((o) => o.url.startsWith(publicUrl)));
    await fleet.control('/_sim/service/requests', { method: 'DELETE' });
    await fleet.control('/_sim/service/deliveries', { method: 'DELETE' });

    const run = await runCli([
      'apply',
      '--json',
      fleetStick(
        fleet,
        Array.from({ length: MPS }, (_, i) => i),
      ),
      '--agent-config',
      agent.file,
    ]);
    expect(run.stderr).toBe('');
    expect(run.code).toBe(0);
    const lines = run.stdout
      .trim()
      .split('\n')
      .map((l) => JSON.parse(l) as JsonLine);
    const result = lines.at(-1);
    expect(result?.type).toBe('result');
    expect(result?.devices?.map((d) => [d.device, d.outcome, d.service?.kind, d.service?.sentence])).toEqual(
      fleet.service.hostnames.map((h) => [h, 'changed', 'connected', 'connected to the service']),
    );
    const done = lines.filter((l) => l.type === 'service-check-done');
    expect(done).toHaveLength(MPS);

    // Each MP was announced to the receiver, and its wait ended before the fallback round could.
    const deliveries = (await fleet.control('/_sim/service/deliveries'))['deliveries'] as {
      sequencerName: string;
      sequencerStatus?: string;
      outcome: string;
    }[];
    for (const h of fleet.service.hostnames)
      expect(deliveries.filter((d) => d.sequencerName === h && d.sequencerStatus === 'AVAILABLE')).toMatchObject([
        { outcome: 'answered' },
      ]);
    for (const { outcome } of done) {
      expect(outcome?.polls).toBeLessThanOrEqual(2);
      expect(outcome?.waitedMs).toBeLessThan(EVENTS_ROUND_MS);
    }

    // Polling at its 2 s round pace asks once per organization (here once per MP) per round of its wait.
    const counts = (await fleet.control('/_sim/service/requests'))['counts'] as Record<string, number | undefined>;
    const applianceRequests = (counts['appliance-list'] ?? 0) + (counts['appliance-get'] ?? 0);
    const pollingWouldMake = done.reduce(
      (sum, { outcome }) => sum + Math.floor((outcome?.waitedMs ?? 0) / DEFAULT_TIMING.roundMs) + 1,
      0,
    );
    expect(applianceRequests).toBeGreaterThanOrEqual(1);
    expect(applianceRequests).toBeLessThanOrEqual(MPS + 1);
    expect(applianceRequests).toBeLessThan(pollingWouldMake);

    expect((await observe.stop()).code).toBe(0);
    expectNoSecret([run.stdout, observe.stdout(), observe.stderr()], [fleet.service.token]);
  });
});
