import { expect } from 'vitest';
import { Secret } from '../../src/core/secret.js';
import {
  createDataApiClient,
  type DataApi,
  type DataApiClientOptions,
  type ServiceCredentials,
  type ServiceRetryInfo,
} from '../../src/service/index.js';
import {
  startServiceSimulator,
  type ServiceSimulator,
  type ServiceSimulatorOptions,
} from '../../src/simulator/service/index.js';

/** The token every service test uses: distinctive, so a leak is easy to find. */
export const TOKEN = 'tok-Quokka-5521-never-shown-Zx9';
export const OTHER_TOKEN = 'tok-Wombat-0042-no-access-Qp3';
export const EMAIL = 'tech@branch.example';
export const PASSWORD = 'pw-Platypus-8810-never-shown';

/** Every form a leaked secret could take in text. */
export function secretForms(secret: string): string[] {
  return [
    secret,
    Buffer.from(secret).toString('base64'),
    Buffer.from(secret).toString('hex'),
    encodeURIComponent(secret),
    Buffer.from(`${EMAIL}:${secret}`).toString('base64'),
  ];
}

export function expectNoSecret(
  texts: readonly string[],
  secrets: readonly string[] = [TOKEN, OTHER_TOKEN, PASSWORD],
): void {
  expect(texts.length).toBeGreaterThan(0);
  const joined = texts.join('\n');
  for (const form of secrets.flatMap(secretForms)) expect(joined).not.toContain(form);
}

/** A simulator with TOKEN (sees everything) and OTHER_TOKEN (no data API access), plus a user for Basic. */
export function startService(options: ServiceSimulatorOptions = {}): Promise<ServiceSimulator> {
  return startServiceSimulator({
    organizations: [
      { id: 12, name: 'Branch Networks' },
      { id: 40, name: 'Head Office' },
    ],
    tokens: [
      { label: 'technician', value: TOKEN },
      { label: 'no-access', value: OTHER_TOKEN, access: false },
    ],
    users: [{ email: EMAIL, password: PASSWORD }],
    reconnectMs: 500,
    ...options,
  });
}

export interface ClientRig {
  api: DataApi;
  retries: ServiceRetryInfo[];
}

export const tokenCredentials = (token = TOKEN): ServiceCredentials => ({ kind: 'token', token: new Secret(token) });

/** A client of `service` trusting its certificate as service.tls.ca, with short timeouts. */
export function clientOf(
  service: { url: string; caPem: string },
  options: DataApiClientOptions & { credentials?: ServiceCredentials; url?: string; caPem?: string | null } = {},
): ClientRig {
  const retries: ServiceRetryInfo[] = [];
  const { credentials, url, caPem, ...clientOptions } = options;
  const api = createDataApiClient(
    {
      url: url ?? service.url,
      credentials: credentials ?? tokenCredentials(),
      caPem: caPem === null ? undefined : (caPem ?? service.caPem),
    },
    { connectTimeoutMs: 2_000, requestTimeoutMs: 5_000, onRetry: (info) => retries.push(info), ...clientOptions },
  );
  return { api, retries };
}

/** The most entries of `times` (epoch ms, any order) inside any window of `windowMs` (half-open, as the simulator counts). */
export function busiestWindow(times: readonly number[], windowMs: number): number {
  const sorted = [...times].sort((a, b) => a - b);
  let most = 0;
  let start = 0;
  for (let end = 0; end < sorted.length; end++) {
    while ((sorted[end] ?? 0) - (sorted[start] ?? 0) >= windowMs) start++;
    most = Math.max(most, end - start + 1);
  }
  return most;
}
