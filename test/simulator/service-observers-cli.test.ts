import { readFileSync } from 'node:fs';
import { Agent, request } from 'undici';
import { afterAll, describe, expect, it } from 'vitest';
import { runCli, useProcesses } from '../support/run-cli.js';
import { usePki } from '../support/test-pki.js';
import { startEventReceiver, type EventReceiver } from './event-receiver.js';
import { rawCaller } from './service-rig.js';

/**
 * `mpprov simulate --service` with events: --service-events-ca, --service-event-fault,
 * --service-org-admin, and the control port's deliveries, observers and event faults.
 */

const processes = useProcesses();
const pki = usePki();
const ca = pki.ca('cli-events-ca', 'mpprov test events CA');
const receiverTls = pki.issue('cli-receiver', '127.0.0.1', ca, 'server', { san: 'IP:127.0.0.1' });
let receiver: EventReceiver | undefined;
afterAll(async () => {
  await receiver?.close();
});

interface StartLine {
  api_url: string;
  password: string;
  control_url: string;
  service: { url: string; token: string; ca_pem: string; org_admin: boolean };
}

const control = async (url: string, init?: { method: string; body?: string }) => {
  const res = await fetch(url, init);
  return { status: res.status, json: (await res.json()) as Record<string, unknown> };
};

describe('mpprov simulate --service with events', () => {
  it("delivers a restart's events to an HTTPS receiver trusted through --service-events-ca, faults and logs on the control port", async () => {
    receiver = await startEventReceiver({
      tls: { cert: readFileSync(receiverTls.cert, 'utf8'), key: readFileSync(receiverTls.key, 'utf8') },
    });
    const { child, firstLine, exited } = await processes.startCli([
      'simulate',
      '--json',
      '--password',
      'pw-ev-4410',
      '--restart-ms',
      '200',
      '--service',
      '--service-reconnect-ms',
      '100',
      '--service-hostname',
      'cli-mp',
      '--service-org-admin',
      '--service-events-ca',
      ca.cert,
      '--service-event-fault',
      'duplicate,times=1',
    ]);
    const info = JSON.parse(firstLine) as StartLine;
    expect(info.service.org_admin).toBe(true);
    // A single device's control_url is its own base (`.../_sim`); the service's endpoints are beside it.
    const origin = new URL(info.control_url).origin;
    const service = rawCaller({ url: info.service.url, caPem: info.service.ca_pem }, info.service.token);
    try {
      const posted = await service.call('POST', '/api/v3/observer', { body: { url: receiver.url, seqEvents: true } });
      expect(posted.status).toBe(200);
      expect((await service.get('/api/v3/observer?allUsers=true')).json).toEqual([posted.json]);
      expect((await control(`${origin}/_sim/service/observers`)).json).toEqual({
        success: true,
        observers: [posted.json],
      });
      expect((await control(`${origin}/_sim/service/event-faults`)).json).toEqual({
        success: true,
        faults: [{ kind: 'duplicate', times: 1 }],
      });

      const restart = await request(`${info.api_url}/service/networking/?action=restart`, {
        method: 'PUT',
        dispatcher: new Agent({ connect: { rejectUnauthorized: false } }),
        headers: {
          authorization: `Basic ${Buffer.from(`admin:${info.password}`).toString('base64')}`,
          'content-type': 'application/json',
        },
        body: '{}',
      });
      expect(restart.statusCode).toBe(202);
      await restart.body.dump();
      await receiver.waitFor(3);
      expect(receiver.events().map((e) => `${String(e['sequencerName'])} ${String(e['sequencerStatus'])}`)).toEqual([
        'cli-mp UNAVAILABLE',
        'cli-mp UNAVAILABLE',
        'cli-mp AVAILABLE',
      ]);
      for (const r of receiver.received) expect(r.text).not.toContain(info.service.token);

      const deliveries = (await control(`${origin}/_sim/service/deliveries`)).json;
      expect(deliveries).toMatchObject({ success: true, counts: { answered: 3 } });
      expect((deliveries['deliveries'] as { fault?: string }[]).map((d) => d.fault)).toEqual([
        'duplicate',
        'duplicate',
        undefined,
      ]);
      expect((await control(`${origin}/_sim/service/requests`)).json).toMatchObject({
        counts: { 'observer-post': 1, 'observer-list': 1 },
      });

      // Faults through the control port: a drop, then cleared; a bad one is refused with its sentence.
      const set = await control(`${origin}/_sim/service/event-faults`, {
        method: 'POST',
        body: JSON.stringify({ faults: ['drop'] }),
      });
      expect(set).toEqual({ status: 200, json: { success: true, faults: [{ kind: 'drop' }] } });
      const bad = await control(`${origin}/_sim/service/event-faults`, {
        method: 'POST',
        body: JSON.stringify({ faults: ['vanish'] }),
      });
      expect(bad.status).toBe(400);
      expect(bad.json['error']).toMatch(/^"vanish" is not an event delivery fault/);
      expect((await control(`${origin}/_sim/service/event-faults`, { method: 'DELETE' })).status).toBe(200);
      expect((await control(`${origin}/_sim/service/deliveries`, { method: 'DELETE' })).status).toBe(200);
      expect((await control(`${origin}/_sim/service/deliveries`)).json).toEqual({
        success: true,
        counts: {},
        deliveries: [],
      });
    } finally {
      await service.close();
    }
    child.kill('SIGTERM');
    expect((await exited).code).toBe(0);
  });

  it('refuses a delivery fault that does not parse, with the usage status', async () => {
    const result = await runCli(['simulate', '--service', '--service-event-fault', 'lose,times=2']);
    expect(result.stderr).toBe(
      'mpprov simulate: "lose,times=2" is not an event delivery fault: write drop, duplicate, reorder or delay=MS (MS up to 600000), each optionally followed by ,times=N (N from 1).\n',
    );
    expect(result.code).toBe(64);
  });

  it('without --service-org-admin the token may not list every user', async () => {
    const { child, firstLine, exited } = await processes.startCli(['simulate', '--json', '--service']);
    const info = JSON.parse(firstLine) as StartLine;
    expect(info.service.org_admin).toBe(false);
    const service = rawCaller({ url: info.service.url, caPem: info.service.ca_pem }, info.service.token);
    expect((await service.get('/api/v3/observer?allUsers=true')).status).toBe(403);
    await service.close();
    child.kill('SIGTERM');
    expect((await exited).code).toBe(0);
  });
});
