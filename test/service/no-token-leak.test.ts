import { inspect } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Secret } from '../../src/core/secret.js';
import {
  serviceTarget,
  waitUntilConnected,
  type ConnectionOutcome,
  type DataApi,
  type ServiceCredentials,
  type ServiceSettings,
} from '../../src/service/index.js';
import type { ServiceFaultSpec, ServiceSimulator } from '../../src/simulator/service/index.js';
import { closedPort, textsOf } from '../support/failures.js';
import { clientOf, EMAIL, expectNoSecret, PASSWORD, secretForms, startService, TOKEN } from './service-fixtures.js';

/**
 * The token (and a Basic password) appear in no error, outcome, progress line, retry note or
 * simulator log, in any form (plain, base64, hex, URL-encoded): every text the service side can
 * produce is collected over the scenarios below and searched.
 */

let service: ServiceSimulator;
const clients: DataApi[] = [];
const collected: string[] = [];
const FAST = { firstMs: 100, maxMs: 200 };

beforeAll(async () => {
  service = await startService({ reconnectMs: 200 });
  service.registerAppliance({ hostname: 'leak-mp', orgId: 12 });
});
afterAll(async () => {
  for (const api of clients) await api.close();
  await service?.close();
});

const basic: ServiceCredentials = { kind: 'basic', email: EMAIL, password: new Secret(PASSWORD) };
const token: ServiceCredentials = { kind: 'token', token: new Secret(TOKEN) };

function collect(...values: unknown[]): void {
  for (const value of values) {
    if (value instanceof Error) collected.push(...textsOf(value));
    else collected.push(typeof value === 'string' ? value : JSON.stringify(value), inspect(value, { depth: 8 }));
  }
}

/**
 * How long a scenario's post-check may wait. A fault the post-check retries (5xx, 429, a slow or
 * unreachable service) keeps it polling to the end of the wait, so that wait is short. Any other
 * answer ends it at once, so its wait is long: it costs nothing when the machine is idle, and on a
 * loaded one the first answer (a new client's TLS handshake included) may take well over a second.
 */
const RETRIED_WAIT_S = 0.5;
const ANSWER_WAIT_S = 30;

/** One client call and one post-check under `fault`, everything they say collected. */
async function scenario(
  credentials: ServiceCredentials,
  fault: ServiceFaultSpec,
  extra: Parameters<typeof clientOf>[1] = {},
  waitS = ANSWER_WAIT_S,
): Promise<ConnectionOutcome> {
  service.setFaults(fault);
  const retries: unknown[] = [];
  const { api } = clientOf(service, {
    credentials,
    rateLimitedAttempts: 2,
    requestTimeoutMs: 400,
    onRetry: (r) => retries.push(r),
    ...extra,
  });
  clients.push(api);
  try {
    collect(await api.listAppliances({ hostname: 'leak-mp' }));
  } catch (error) {
    collect(error);
  }
  const progress: unknown[] = [];
  const outcome = await waitUntilConnected(api, 'leak-mp', {
    waitS,
    backoff: FAST,
    onProgress: (p) => progress.push(p),
  });
  collect(outcome, outcome.sentence, progress, retries, api);
  service.clearFaults();
  return outcome;
}

describe('no secret in any output', () => {
  it('over every answer and failure, with a token and with Basic', async () => {
    // A service that echoes what it was sent (the header, the secret itself) in its error message.
    const echoOf = (credentials: ServiceCredentials) => {
      const header =
        credentials.kind === 'token'
          ? `Token ${TOKEN}`
          : `Basic ${Buffer.from(`${EMAIL}:${PASSWORD}`).toString('base64')}`;
      const secret = credentials.kind === 'token' ? TOKEN : PASSWORD;
      return (status: number): ServiceFaultSpec => ({
        rawBody: {
          status,
          contentType: 'application/json',
          text: JSON.stringify({ status, message: `rejected ${header} / ${secret}` }),
        },
      });
    };
    const kinds: string[] = [];
    for (const credentials of [token, basic]) {
      const echo = echoOf(credentials);
      const answered: ServiceFaultSpec[] = [
        {},
        { error: { name: 'noCredentials' } },
        { error: { name: 'badCredentials' } },
        { error: { name: 'undecodable' } },
        { error: { name: 'accessDenied' } },
        { error: { name: 'notFound' } },
        { error: { name: 'notAcceptable' } },
        echo(400),
        echo(401),
        { rawBody: { text: `<html>${credentials.kind === 'token' ? TOKEN : PASSWORD}</html>` } },
        { oversizedBody: { bytes: 5 * 1024 * 1024 } },
      ];
      const retried: ServiceFaultSpec[] = [
        { error: { name: 'internal' } },
        { error: { name: 'tooManyRequests' } },
        echo(500),
        { latencyMs: 1_000 },
      ];
      for (const fault of answered) kinds.push((await scenario(credentials, fault)).kind);
      for (const fault of retried) kinds.push((await scenario(credentials, fault, {}, RETRIED_WAIT_S)).kind);
    }
    const unreachable = `https://127.0.0.1:${await closedPort()}/api`;
    kinds.push((await scenario(token, {}, { url: unreachable }, RETRIED_WAIT_S)).kind);
    kinds.push((await scenario(token, {}, { caPem: null })).kind);
    expect(kinds).toHaveLength(32);
    expect(new Set(kinds)).toEqual(new Set(['connected', 'bad-token', 'no-permission', 'unreachable']));
    collect(service.requests());
    expect(collected.length).toBeGreaterThan(100);
    expectNoSecret(collected);
    // The echoed secrets were really sent back by the service, and cut out by the client.
    expect(collected.join('\n')).toContain('rejected Token (secret) / (secret)');
    expect(collected.join('\n')).toContain('rejected Basic (secret) / (secret)');
  }, 120_000);

  it('the settings and the target show the token as (secret) only', () => {
    const settings: ServiceSettings = { url: service.url, token: new Secret(TOKEN), waitConnectedS: 300 };
    const texts = [
      JSON.stringify(settings),
      inspect(settings),
      String(settings.token),
      JSON.stringify(serviceTarget(settings)),
      inspect(serviceTarget(settings), { depth: 8 }),
    ];
    expectNoSecret(texts);
    expect(texts[0]).toContain('"token":"(secret)"');
  });

  it('the search itself finds the token in every form it looks for', () => {
    const forms = secretForms(TOKEN);
    expect(forms).toHaveLength(5);
    for (const form of forms) expect(() => expectNoSecret([`x ${form} y`], [TOKEN])).toThrow();
  });
});
