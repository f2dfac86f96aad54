import { setTimeout as sleep } from 'node:timers/promises';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { RateLimiter, waitUntilConnected, type ConnectionProgress, type DataApi } from '../../src/service/index.js';
import type { ServiceSimulator } from '../../src/simulator/service/index.js';
import { closedPort } from '../support/failures.js';
import { clientOf, expectNoSecret, OTHER_TOKEN, startService, tokenCredentials } from './service-fixtures.js';

/** Each outcome of the post-check, against the simulated service over HTTPS. */

let service: ServiceSimulator;
const clients: DataApi[] = [];
const FAST = { firstMs: 150, maxMs: 300 };

beforeAll(async () => {
  service = await startService({ reconnectMs: 500 });
});
beforeEach(() => service.clearFaults());
afterAll(async () => {
  for (const api of clients) await api.close();
  await service?.close();
});

function client(...args: Parameters<typeof clientOf>): DataApi {
  const { api } = clientOf(...args);
  clients.push(api);
  return api;
}

let counter = 0;
/** A fresh MP in the simulated service, in `status`. */
function mp(status?: 'AVAILABLE' | 'UNAVAILABLE' | 'BLOCKED' | 'REMOVED' | 'NEW'): string {
  counter += 1;
  const hostname = `branch-mp${counter}`;
  service.registerAppliance({ hostname, orgId: 12, ...(status === undefined ? {} : { connectionStatus: status }) });
  return hostname;
}

describe('connected', () => {
  it('polls through the restart and the reconnect delay, then says "connected to the service"', async () => {
    const hostname = mp();
    service.restartStarted(hostname);
    const progress: ConnectionProgress[] = [];
    // The MP answers again once two polls have seen it UNAVAILABLE (on that event: after a fixed
    // time, a loaded machine may not have answered a single poll yet).
    let answeredAt = 0;
    const onProgress = (p: ConnectionProgress) => {
      progress.push(p);
      if (progress.length === 2) {
        service.answeringAgain(hostname);
        answeredAt = Date.now();
      }
    };
    const outcome = await waitUntilConnected(client(service), hostname, { waitS: 10, backoff: FAST, onProgress });
    expect(answeredAt).toBeGreaterThan(0);
    expect(outcome).toMatchObject({
      kind: 'connected',
      connected: true,
      hostname,
      sentence: 'connected to the service',
      lastStatus: 'AVAILABLE',
    });
    expect(outcome.appliance).toMatchObject({ hostname, orgId: 12, connectionStatus: 'AVAILABLE' });
    // Not before the service's reconnect delay ran out.
    expect(Date.now() - answeredAt).toBeGreaterThanOrEqual(500);
    expect(progress.length).toBeGreaterThan(1);
    expect(progress[0]).toMatchObject({ hostname, polls: 1, status: 'UNAVAILABLE' });
    // Every answer but the last was a progress; a service that refuses a query costs one more.
    expect(outcome.polls).toBeGreaterThanOrEqual(progress.length + 1);
  });

  it('matches the hostname without case, and retries a 500 within the wait', async () => {
    const hostname = mp();
    service.setFaults({ error: { name: 'internal', count: 2 } });
    const progress: ConnectionProgress[] = [];
    const outcome = await waitUntilConnected(client(service), hostname.toUpperCase(), {
      waitS: 10,
      backoff: FAST,
      onProgress: (p) => progress.push(p),
    });
    expect(outcome.kind).toBe('connected');
    expect(outcome.polls).toBe(3);
    expect(progress.map((p) => p.failure?.code)).toEqual([
      'MPPROV_SERVICE_INTERNAL_ERROR',
      'MPPROV_SERVICE_INTERNAL_ERROR',
    ]);
  });
});

describe('not connected, by what the service says', () => {
  it('unknown to the service', async () => {
    const outcome = await waitUntilConnected(client(service), 'never-registered', { waitS: 2, backoff: FAST });
    expect(outcome).toMatchObject({ kind: 'unknown', connected: false, lastStatus: 'absent' });
    expect(outcome.sentence).toBe(
      'unknown to the service: it lists no Monitoring Point with hostname "never-registered" (checked for 2 s)',
    );
    expect(outcome.polls).toBeGreaterThan(1);
  });

  it('still UNAVAILABLE after the wait: never longer than the wait', async () => {
    const hostname = mp();
    service.restartStarted(hostname);
    const started = Date.now();
    const outcome = await waitUntilConnected(client(service), hostname, { waitS: 2, backoff: FAST });
    // The deadline holds: a wait that ran on past it (a poll sent after it, or an answer awaited)
    // would take seconds more; a second of room keeps a loaded machine's late timers out of it.
    expect(Date.now() - started).toBeLessThan(3_000);
    expect(outcome).toMatchObject({ kind: 'unavailable', lastStatus: 'UNAVAILABLE' });
    expect(outcome.sentence).toBe(
      'still UNAVAILABLE after 2 s: the service has not heard from it since the restart (check DNS, proxy, firewall and 802.1X on its port)',
    );
  });

  it('an MP whose management port failed 802.1X stays UNAVAILABLE', async () => {
    const hostname = mp();
    service.restartStarted(hostname);
    service.answeringAgain(hostname);
    service.managementDot1xFailed(hostname);
    const outcome = await waitUntilConnected(client(service), hostname, { waitS: 1.5, backoff: FAST });
    expect(outcome.kind).toBe('unavailable');
  });

  it('BLOCKED, REMOVED and NEW', async () => {
    const api = client(service);
    // The connection is up first, and the wait leaves the first answers seconds on a loaded machine.
    await api.listOrganizations();
    const [blocked, removed, fresh] = await Promise.all([
      waitUntilConnected(api, mp('BLOCKED'), { waitS: 3, backoff: FAST }),
      waitUntilConnected(api, mp('REMOVED'), { waitS: 3, backoff: FAST }),
      waitUntilConnected(api, mp('NEW'), { waitS: 3, backoff: FAST }),
    ]);
    expect(blocked).toMatchObject({
      kind: 'blocked',
      sentence: 'BLOCKED in the service: an administrator of the service must unblock it',
    });
    expect(removed).toMatchObject({
      kind: 'removed',
      sentence: 'REMOVED from the service: it must be added to the service again',
    });
    expect(fresh).toMatchObject({
      kind: 'new',
      sentence: 'still NEW in the service after 3 s: it has not reported yet',
    });
  });

  it('an MP blocked while it is being waited for', async () => {
    const hostname = mp();
    service.restartStarted(hostname);
    // Blocked once the first poll has seen it UNAVAILABLE; the wait leaves later polls seconds.
    const onProgress = () => service.setConnectionStatus(hostname, 'BLOCKED');
    // The connection is up first, and the wait has room: it ends at the BLOCKED answer, which a
    // loaded machine (a CI run beside two busy loops) once delivered after a 4 s wait had run out.
    const api = client(service);
    await api.listOrganizations();
    const outcome = await waitUntilConnected(api, hostname, { waitS: 20, backoff: FAST, onProgress });
    expect(outcome).toMatchObject({ kind: 'blocked' });
    expect(outcome.polls).toBeGreaterThan(1);
  });
});

describe('not connected, because the service cannot tell', () => {
  it('bad token: stops at the first 401', async () => {
    const wrong = 'tok-Wrong-4471-never-shown';
    const hostname = mp();
    const outcome = await waitUntilConnected(client(service, { credentials: tokenCredentials(wrong) }), hostname, {
      waitS: 10,
      backoff: FAST,
    });
    expect(outcome).toMatchObject({ kind: 'bad-token', polls: 1, errorCode: 'MPPROV_SERVICE_BAD_CREDENTIALS' });
    expect(outcome.sentence).toBe(
      `bad token: the service at ${service.url} does not accept the access token (HTTP 401 "Bad credentials"): it is wrong, expired or revoked`,
    );
    expectNoSecret([JSON.stringify(outcome), outcome.sentence], [wrong]);
  });

  it('bad token: a token revoked mid-run stops the polling at once', async () => {
    const value = service.addToken({ label: 'revoked-mid-run', value: 'tok-Revoked-9981' });
    service.revokeToken('revoked-mid-run', { afterRequests: 2 });
    const hostname = mp();
    service.restartStarted(hostname);
    const outcome = await waitUntilConnected(client(service, { credentials: tokenCredentials(value) }), hostname, {
      waitS: 10,
      backoff: FAST,
    });
    expect(outcome).toMatchObject({ kind: 'bad-token', polls: 3, lastStatus: 'UNAVAILABLE' });
  });

  it('no permission: stops at the first 403', async () => {
    const outcome = await waitUntilConnected(client(service, { credentials: tokenCredentials(OTHER_TOKEN) }), mp(), {
      waitS: 10,
      backoff: FAST,
    });
    expect(outcome).toMatchObject({ kind: 'no-permission', polls: 1, errorCode: 'MPPROV_SERVICE_FORBIDDEN' });
    expect(outcome.sentence).toMatch(
      /^no permission: the service at .* denies GET \/v3\/appliance\?hostname=branch-mp\d+ to the access token/,
    );
  });

  it('service unreachable: retried for the whole wait, with the reason', async () => {
    const url = `https://127.0.0.1:${await closedPort()}/api`;
    // 3 s for polls before the last second of the wait: several polls even on a loaded machine.
    const outcome = await waitUntilConnected(client(service, { url }), 'branch-mp1', { waitS: 4, backoff: FAST });
    expect(outcome).toMatchObject({ kind: 'unreachable', errorCode: 'MPPROV_SERVICE_UNREACHABLE' });
    expect(outcome.polls).toBeGreaterThan(2);
    expect(outcome.sentence).toBe(`service unreachable: cannot reach ${url}: connection refused`);
  });

  it('service unreachable: a wrong service.url (404) stops at once', async () => {
    const url = service.url.replace(/\/api$/, '');
    const outcome = await waitUntilConnected(client(service, { url }), mp(), { waitS: 10, backoff: FAST });
    expect(outcome).toMatchObject({ kind: 'unreachable', polls: 1, errorCode: 'MPPROV_SERVICE_NOT_FOUND' });
  });

  it('service unreachable: 500s until the end of the wait say what it last said', async () => {
    const hostname = mp();
    service.restartStarted(hostname);
    const api = client(service);
    // The connection is up before the wait starts, and the wait leaves the first poll seconds for
    // its answer: a poll answered after the last moment a later poll could be sent leaves nothing
    // failed to report (the outcome is then rightly "unavailable"), and on a loaded machine a first
    // TLS handshake alone can take longer than a second.
    await api.listOrganizations();
    // From the first answer on, the service fails.
    let failing = false;
    const onProgress = () => {
      failing = true;
      service.setFaults({ error: { name: 'internal' } });
    };
    const outcome = await waitUntilConnected(api, hostname, { waitS: 4, backoff: FAST, onProgress });
    expect(failing).toBe(true);
    expect(outcome.kind).toBe('unreachable');
    expect(outcome.polls).toBeGreaterThan(1);
    // The MP's id is known after the first answer: the rounds then ask for it alone.
    expect(outcome.sentence).toMatch(
      new RegExp(
        `^service unreachable: the service at ${service.url} failed internally on GET /v3/appliance(/\\d+|\\?orgId=12|\\?hostname=${hostname}) ` +
          '\\(HTTP 500 "Internal server error"\\); retry later; it last said UNAVAILABLE$',
      ),
    );
  });

  it('a slow service: the wait is kept, the answer in flight abandoned', async () => {
    service.setFaults({ latencyMs: 4_000 });
    const started = Date.now();
    const outcome = await waitUntilConnected(client(service), mp(), { waitS: 1, backoff: FAST });
    // Abandoned at the end of the 1 s wait, not when the 4 s answer arrives.
    expect(Date.now() - started).toBeLessThan(3_000);
    expect(outcome).toMatchObject({ kind: 'unreachable', polls: 1, errorCode: 'MPPROV_SERVICE_TIMEOUT' });
    expect(outcome.sentence).toBe('service unreachable: no answer within the wait of 1 s');
  });

  it('unchecked: the shared rate limit gave it no turn within the wait', async () => {
    const limiter = new RateLimiter({ requests: 1, windowMs: 10_000 });
    const api = client(service, { limiter });
    await api.listOrganizations();
    const outcome = await waitUntilConnected(api, mp(), { waitS: 1, backoff: FAST });
    expect(outcome).toMatchObject({ kind: 'unchecked', polls: 0 });
    expect(outcome.sentence).toBe(
      "not checked: the service's rate limit, shared by every device of this run, gave it no turn within 1 s",
    );
  });
});

describe('cancelled', () => {
  it('rejects with the signal reason, and no poll is left running', async () => {
    const hostname = mp();
    service.restartStarted(hostname);
    const controller = new AbortController();
    const waiting = waitUntilConnected(client(service), hostname, {
      waitS: 30,
      backoff: FAST,
      signal: controller.signal,
    });
    await sleep(300);
    controller.abort(new Error('SIGTERM'));
    await expect(waiting).rejects.toThrow('SIGTERM');
    const count = service.requests().length;
    await sleep(500);
    expect(service.requests().length).toBe(count);
  });
});

describe('a status the documented set does not have', () => {
  it('ONLINE is what the service said: reported as said, and not confirmed', async () => {
    const hostname = mp('AVAILABLE');
    service.setFaults({ statusWords: { AVAILABLE: 'ONLINE' } });
    const outcome = await waitUntilConnected(client(service), hostname, { waitS: 1.5, backoff: FAST });
    expect(outcome).toMatchObject({ kind: 'other-status', connected: false, lastStatus: 'ONLINE' });
    expect(outcome.sentence).toBe(
      'not confirmed after 2 s: the service says ONLINE, which is not a status mpprov knows (AVAILABLE means connected)',
    );
  });

  it('a long word of the service is cut and an encoded run in it is not shown', async () => {
    const hostname = mp('UNAVAILABLE');
    service.setFaults({ statusWords: { UNAVAILABLE: `OFF ${'QUJD'.repeat(20)} ${'and more words '.repeat(4)}` } });
    const outcome = await waitUntilConnected(client(service), hostname, { waitS: 1, backoff: FAST });
    expect(outcome.kind).toBe('other-status');
    expect(outcome.sentence).toBe(
      'not confirmed after 1 s: the service says OFF [encoded data, 80 characters, not shown] and more words... (cut at 60 of 104 characters), which is not a status mpprov knows (AVAILABLE means connected)',
    );
  });
});
