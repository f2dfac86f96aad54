import { Agent, request } from 'undici';
import {
  startServiceSimulator,
  type ServiceSimulator,
  type ServiceSimulatorOptions,
} from '../../src/simulator/service/index.js';

/**
 * A simulated monitoring service on loopback and a raw HTTPS caller for it (undici, trusting only
 * the service's certificate): no product code, so these tests say what the service answers.
 */

export const RIG_TOKEN = 'tok-Numbat-7731-sim-rig';
export const BRANCH_TOKEN = 'tok-Quoll-2208-branch-only';

export interface RawAnswer {
  status: number;
  headers: Record<string, string | string[] | undefined>;
  text: string;
  json: unknown;
}

export interface ServiceRig {
  service: ServiceSimulator;
  /** One request; `body` (an object) goes as JSON with its Content-Type unless `headers` say otherwise. */
  call(
    method: string,
    path: string,
    options?: { body?: unknown; rawBody?: string | Buffer; headers?: Record<string, string>; token?: string },
  ): Promise<RawAnswer>;
  get(path: string, token?: string): Promise<RawAnswer>;
  close(): Promise<void>;
}

/** Two organizations (12 Branch Networks, 40 Head Office); RIG_TOKEN sees both, BRANCH_TOKEN only 12. */
export async function startServiceRig(options: ServiceSimulatorOptions = {}): Promise<ServiceRig> {
  const service = await startServiceSimulator({
    organizations: [
      { id: 12, name: 'Branch Networks' },
      { id: 40, name: 'Head Office' },
    ],
    tokens: [
      { label: 'rig', value: RIG_TOKEN },
      { label: 'branch-only', value: BRANCH_TOKEN, orgIds: [12] },
    ],
    rateLimit: false,
    ...options,
  });
  const caller = rawCaller(service, RIG_TOKEN);
  return {
    ...caller,
    service,
    close: async () => {
      await caller.close();
      await service.close();
    },
  };
}

/** A raw caller of any simulated service (`url`, `caPem`), with `token` unless a call names another. */
export function rawCaller(
  service: { url: string; caPem: string },
  token: string,
): Pick<ServiceRig, 'call' | 'get' | 'close'> {
  const agent = new Agent({ connect: { ca: service.caPem } });
  const origin = new URL(service.url).origin;
  const call: ServiceRig['call'] = async (method, path, callOptions = {}) => {
    const headers: Record<string, string> = {
      accept: 'application/json',
      authorization: `Token ${callOptions.token ?? token}`,
    };
    let body: string | Buffer | undefined = callOptions.rawBody;
    if (callOptions.body !== undefined) {
      body = JSON.stringify(callOptions.body);
      headers['content-type'] = 'application/json';
    }
    Object.assign(headers, callOptions.headers ?? {});
    for (const [name, value] of Object.entries(headers)) if (value === '') delete headers[name];
    const response = await request(`${origin}${path}`, {
      dispatcher: agent,
      method: method as 'GET',
      headers,
      ...(body === undefined ? {} : { body }),
    });
    const text = await response.body.text();
    let json: unknown;
    try {
      json = JSON.parse(text) as unknown;
    } catch {
      json = undefined;
    }
    return { status: response.statusCode, headers: response.headers, text, json };
  };
  return {
    call,
    get: (path, asToken) => call('GET', path, asToken === undefined ? {} : { token: asToken }),
    close: () => agent.close(),
  };
}

/** The vendor error body. */
export const vendorError = (status: number, ...messages: string[]) => ({ httpStatusCode: status, messages });
