import { execFile } from 'node:child_process';
import { Agent, FormData, request } from 'undici';
import { z } from 'zod';
import type { SimulatorHandle, SimulatorOptions } from '../../src/simulator/index.js';
import { useSimulator, type SimulatorFixture, type SimulatorFixtureSettings } from '../support/simulator-fixture.js';

/** Talks to a simulator over real HTTPS with undici, trusting exactly its certificate. */
export interface ApiAnswer {
  status: number;
  headers: Record<string, string | string[] | undefined>;
  body: Record<string, unknown>;
}

/** Every answer of the API is a JSON object (an empty body reads as {}). */
const AnswerBody = z.record(z.string(), z.unknown());

/** One family's stanza as GET /interface/ shows it: the tests compare its fields, so each stays unknown. */
const ShownStanza = z.record(z.string(), z.unknown());

/**
 * One interface as GET /interface/ shows it: only what the tests read is named, every other field is
 * kept (a test's toEqual sees the whole answer). Deliberately the tests' own schema, not the
 * client's: the simulator is checked against what the documentation says, not against the product.
 */
export const ShownInterface = z.looseObject({
  name: z.string(),
  families: z.looseObject({ inet: ShownStanza.nullable().optional(), inet6: ShownStanza.nullable().optional() }),
});
export type ShownInterface = z.infer<typeof ShownInterface>;

/** The `interface` of a GET /interface/NAME/ answer. */
export function interfaceOf(answer: ApiAnswer): ShownInterface {
  return ShownInterface.parse(answer.body['interface']);
}

/** The `interfaces` of a GET /interface/ answer. */
export function interfacesOf(answer: ApiAnswer): ShownInterface[] {
  return z.array(ShownInterface).parse(answer.body['interfaces']);
}

export interface ApiClient {
  call(method: string, path: string, body?: unknown, headers?: Record<string, string>): Promise<ApiAnswer>;
  get(path: string): Promise<ApiAnswer>;
  post(path: string, body: unknown): Promise<ApiAnswer>;
  put(path: string, body: unknown): Promise<ApiAnswer>;
  del(path: string, body?: unknown): Promise<ApiAnswer>;
  upload(
    parts: Record<string, { name: string; content: Uint8Array | string }>,
    headers?: Record<string, string>,
  ): Promise<ApiAnswer>;
  close(): Promise<void>;
}

export function apiClient(sim: SimulatorHandle, options: { password?: string; username?: string } = {}): ApiClient {
  const agent = new Agent({ connect: { ca: sim.certificatePem } });
  const auth = `Basic ${Buffer.from(`${options.username ?? sim.username}:${options.password ?? sim.password}`).toString('base64')}`;
  const call = async (
    method: string,
    path: string,
    body?: unknown,
    headers: Record<string, string> = {},
  ): Promise<ApiAnswer> => {
    const isForm = body instanceof FormData;
    const payload =
      body === undefined ? undefined : isForm ? body : typeof body === 'string' ? body : JSON.stringify(body);
    const res = await request(`${sim.apiUrl}${path}`, {
      method: method as 'GET',
      dispatcher: agent,
      headers: {
        authorization: auth,
        ...(payload !== undefined && !isForm ? { 'content-type': 'application/json' } : {}),
        ...headers,
      },
      ...(payload !== undefined ? { body: payload } : {}),
    });
    const text = await res.body.text();
    return {
      status: res.statusCode,
      headers: res.headers,
      body: text === '' ? {} : AnswerBody.parse(JSON.parse(text)),
    };
  };
  return {
    call,
    get: (path) => call('GET', path),
    post: (path, body) => call('POST', path, body),
    put: (path, body) => call('PUT', path, body),
    del: (path, body) => call('DELETE', path, body),
    upload: (parts, headers) => {
      const form = new FormData();
      for (const [part, file] of Object.entries(parts)) {
        form.append(part, new Blob([file.content]), file.name);
      }
      return call('POST', '/interface/file/', form, headers);
    },
    close: () => agent.close(),
  };
}

/**
 * The simulator fixture with a raw API client bound to its device: `const { sim, api } =
 * useSimulatorApi(...)` at the top of a file or describe block, both stable for its tests.
 */
export function useSimulatorApi(
  options?: SimulatorOptions | (() => SimulatorOptions),
  settings?: SimulatorFixtureSettings,
): SimulatorFixture & { api: ApiClient } {
  const device = useSimulator(options, settings);
  return {
    ...device,
    api: device.attach(
      (sim) => apiClient(sim),
      (api) => api.close(),
    ),
  };
}

/** Polls until `done()` holds; fails after `timeoutMs` with `what`. */
export async function waitFor(done: () => boolean, what: string, timeoutMs = 10_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!done()) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 10));
  }
}

/** Waits until the device is in `phase` (control state). */
export async function waitForPhase(sim: SimulatorHandle, phase: string, timeoutMs = 10_000): Promise<void> {
  await waitFor(() => sim.state().phase === phase, `phase ${phase} (device is ${sim.state().phase})`, timeoutMs);
}

/**
 * Restarts networking and waits until the device answers again. The restart counter tells an
 * outage that already ended from one that has not begun, however short the restart time.
 */
export async function restartNetworking(sim: SimulatorHandle, api: ApiClient): Promise<void> {
  const before = sim.state().restarts;
  const answer = await api.put('/service/networking/?action=restart', {});
  if (answer.status !== 202) throw new Error(`restart answered ${answer.status}: ${JSON.stringify(answer.body)}`);
  await waitFor(
    () => sim.state().restarts > before && sim.state().phase === 'up',
    'the device to come back from its restart',
  );
}

export interface CurlResult {
  exitCode: number;
  status: number;
  body: string;
}

/** Runs the real curl binary; `-w` appends the status code on its own line. */
export function curl(args: string[]): Promise<CurlResult> {
  return new Promise((resolve) => {
    execFile(
      'curl',
      ['-sS', '--max-time', '10', '-w', '\n%{http_code}', ...args],
      { encoding: 'utf8' },
      (error, stdout) => {
        const cut = stdout.lastIndexOf('\n');
        resolve({
          exitCode: error === null ? 0 : typeof error.code === 'number' ? error.code : 1,
          status: Number(stdout.slice(cut + 1)),
          body: stdout.slice(0, cut),
        });
      },
    );
  });
}

/** Flat stanza bodies used across the tests. */
export const STANZA = {
  eth1Static: {
    name: 'eth1',
    family: 'inet',
    method: 'static',
    address: '192.0.2.10',
    netmask: '255.255.255.0',
    gateway: '192.0.2.1',
  },
  eth1Dhcp: { name: 'eth1', family: 'inet', method: 'dhcp' },
  wlanPersonal: {
    name: 'wlan0',
    family: 'inet',
    method: 'dhcp',
    ssid: 'lab',
    security: 'wpa2_personal',
    passphrase: 'correct horse',
  },
} as const;
