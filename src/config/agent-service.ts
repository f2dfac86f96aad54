import { constants } from 'node:fs';
import { access } from 'node:fs/promises';
import { isIPv4, isIPv6 } from 'node:net';
import { isAbsolute, join } from 'node:path';
import { z } from 'zod';
import type { KeyPath, UnplacedProblem } from '../core/problem.js';
import { Severity } from '../core/problem.js';
import { readCappedFile } from '../core/read-capped-file.js';
import type { Secret } from '../core/secret.js';
import { readAgentCaFile } from './agent-ca-file.js';
import { parseListen } from './loopback-listen.js';
import { readSecretFile } from './secret-file.js';

/**
 * agent.yaml's `service` block (docs/agent-config.md): the monitoring service's data API, how long
 * to wait for an MP and its paths, the organization, and the events receiver. Read here into the
 * shape src/service takes as ServiceSettings (config comes before the service stage).
 */

export const AgentService = z.strictObject({
  url: z.string().min(1).describe('the data API base including /api, e.g. https://service.example/api'),
  token_file: z.string().min(1).optional().describe('absolute path of a file holding the access token'),
  token_credential: z
    .string()
    .min(1)
    .optional()
    .describe('file name in $CREDENTIALS_DIRECTORY (systemd LoadCredential)'),
  tls: z
    .strictObject({ ca: z.string().min(1).optional().describe('absolute path of a CA certificate file') })
    .optional(),
  wait_connected_s: z.number().positive().max(3600).optional(),
  wait_measuring_s: z
    .number()
    .positive()
    .max(3600)
    .optional()
    .describe('after the MP is AVAILABLE, how long to wait until every path of its stick measures (default 600)'),
  org_id: z
    .number()
    .int()
    .positive()
    .optional()
    .describe("the MPs' organization, for rounds and path creation when the service's records do not say it"),
  events: z
    .strictObject({
      listen: z.string().min(1).describe('HOST:PORT the events receiver listens on; beyond loopback it needs tls'),
      public_url: z
        .string()
        .min(1)
        .describe('https URL the service posts events to (registered with POST /v3/observer)'),
      tls: z
        .strictObject({
          cert: z.string().min(1).describe('absolute path of the PEM certificate (chain) the receiver serves'),
          key: z.string().min(1).describe('absolute path of its PEM private key'),
        })
        .optional(),
      check_s: z
        .number()
        .int()
        .positive()
        .max(3600)
        .optional()
        .describe('how often the registration is checked (blacklisted?); default 60'),
    })
    .optional()
    .describe('learn of SEQUENCER_EVENTs instead of waiting for a poll round'),
});

/** The events receiver as agent.yaml sets it; files are named, not read (the key stays on disk until served). */
export interface AgentServiceEvents {
  listen: { host: string; port: number; text: string; loopback: boolean };
  publicUrl: string;
  tls?: { certFile: string; keyFile: string } | undefined;
  checkS: number;
}

/** agent.yaml's `service` block once read: the shape src/service takes as ServiceSettings. */
export interface AgentServiceSettings {
  url: string;
  token: Secret;
  caPem?: string | undefined;
  waitConnectedS: number;
  /**
   * After AVAILABLE, how long to wait until each path of the stick measures. Always set when read
   * from agent.yaml; a settings object made in code may leave it out for the default.
   */
  waitMeasuringS?: number | undefined;
  /** `service.org_id`: the organization when the service's records do not say it. */
  orgId?: number | undefined;
  events?: AgentServiceEvents | undefined;
}

const DEFAULT_WAIT_CONNECTED_S = 300;
/** `service.wait_measuring_s` when agent.yaml does not say. */
export const DEFAULT_WAIT_MEASURING_S = 600;
const DEFAULT_EVENTS_CHECK_S = 60;

type Fail = (at: KeyPath, message: string, hint?: string) => void;

/** The service block: URL checked, exactly one token source read into a Secret, the CA read. */
export async function resolveService(
  entry: z.infer<typeof AgentService>,
  env: NodeJS.ProcessEnv,
  problems: UnplacedProblem[],
): Promise<AgentServiceSettings | undefined> {
  const before = problems.length;
  const fail: Fail = (at, message, hint) => {
    problems.push({
      severity: Severity.Error,
      path: ['service', ...at],
      message,
      ...(hint === undefined ? {} : { hint }),
    });
  };
  let url: URL | undefined;
  try {
    url = new URL(entry.url);
  } catch {
    fail(['url'], `'${entry.url}' is not a URL`, 'write it like https://service.example/api');
  }
  if (url !== undefined) {
    if (url.protocol !== 'https:') fail(['url'], 'the service URL must start with https://');
    // Credentials in a URL would end up in messages and logs: the token has its own key.
    else if (url.username !== '' || url.password !== '')
      fail(
        ['url'],
        'the service URL must not contain a user name or password',
        'put the token in token_file or token_credential',
      );
    else if (url.search !== '' || url.hash !== '') fail(['url'], 'the service URL must not have a query or fragment');
  }
  let token: Secret | undefined;
  if (entry.token_file !== undefined && entry.token_credential !== undefined) {
    fail(['token_credential'], 'the token is given twice, as token_file and as token_credential', 'keep one of them');
  } else if (entry.token_file !== undefined) {
    if (!isAbsolute(entry.token_file)) fail(['token_file'], 'the token file must be an absolute path in agent.yaml');
    else {
      const secret = await readSecretFile(entry.token_file);
      if (typeof secret === 'string') fail(['token_file'], secret);
      else token = secret;
    }
  } else if (entry.token_credential !== undefined) {
    const dir = env.CREDENTIALS_DIRECTORY;
    if (dir === undefined || dir === '') {
      fail(
        ['token_credential'],
        `credential '${entry.token_credential}' needs $CREDENTIALS_DIRECTORY, which is not set`,
        'run under systemd with LoadCredential=, or use token_file',
      );
    } else if (entry.token_credential.includes('/')) {
      fail(['token_credential'], 'a credential is a file name, not a path');
    } else {
      const secret = await readSecretFile(join(dir, entry.token_credential));
      if (typeof secret === 'string') fail(['token_credential'], secret);
      else token = secret;
    }
  } else {
    problems.push({
      severity: Severity.Error,
      path: ['service'],
      message: 'the service block needs a token: token_file or token_credential',
      atKey: true,
    });
  }
  let caPem: string | undefined;
  if (entry.tls?.ca !== undefined) {
    if (!isAbsolute(entry.tls.ca)) fail(['tls', 'ca'], 'the CA file must be an absolute path in agent.yaml');
    else {
      // As a device's tls.ca: a FIFO named here must not hang every command that reads agent.yaml.
      const ca = await readAgentCaFile(entry.tls.ca);
      if ('problem' in ca) fail(['tls', 'ca'], ca.problem);
      else caPem = ca.pem;
    }
  }
  const events = entry.events === undefined ? undefined : await resolveEvents(entry.events, fail);
  if (problems.length > before || token === undefined) return undefined;
  return {
    url: entry.url.replace(/\/+$/, ''),
    token,
    ...(caPem === undefined ? {} : { caPem }),
    waitConnectedS: entry.wait_connected_s ?? DEFAULT_WAIT_CONNECTED_S,
    waitMeasuringS: entry.wait_measuring_s ?? DEFAULT_WAIT_MEASURING_S,
    ...(entry.org_id === undefined ? {} : { orgId: entry.org_id }),
    ...(events === undefined ? {} : { events }),
  };
}

/** The events block: where to listen (beyond loopback only with TLS), the public https URL, the files. */
async function resolveEvents(
  entry: NonNullable<z.infer<typeof AgentService>['events']>,
  fail: Fail,
): Promise<AgentServiceEvents | undefined> {
  const listen = parseEventsListen(entry.listen);
  if ('message' in listen) fail(['events', 'listen'], listen.message, listen.hint);
  else if (!listen.loopback && entry.tls === undefined)
    fail(
      ['events', 'listen'],
      `the events receiver on ${listen.text} would take events from the network in clear text`,
      'add events.tls: { cert: /etc/mpprov/events.crt, key: /etc/mpprov/events.key }, or listen on 127.0.0.1',
    );
  // The documented observer URL is HTTPS or HTTP: plain HTTP only where the receiver itself serves
  // it, which the rule above keeps to loopback (a service on this host, a rehearsal).
  const plainLoopback = !('message' in listen) && listen.loopback && entry.tls === undefined;
  const publicUrl = publicUrlProblem(entry.public_url, plainLoopback);
  if (publicUrl !== undefined) fail(['events', 'public_url'], publicUrl.message, publicUrl.hint);
  let tls: AgentServiceEvents['tls'];
  if (entry.tls !== undefined) {
    const cert = await tlsFileProblem(entry.tls.cert, 'certificate');
    if (cert !== undefined) fail(['events', 'tls', 'cert'], cert);
    const key = await tlsFileProblem(entry.tls.key, 'key');
    if (key !== undefined) fail(['events', 'tls', 'key'], key);
    tls = { certFile: entry.tls.cert, keyFile: entry.tls.key };
  }
  if ('message' in listen || publicUrl !== undefined) return undefined;
  return { listen, publicUrl: entry.public_url, tls, checkS: entry.check_s ?? DEFAULT_EVENTS_CHECK_S };
}

const LISTEN_HINT = 'write it like 0.0.0.0:8472, [::]:8472 or 127.0.0.1:8472';

/** `HOST:PORT` with an IP address (IPv6 in brackets) or localhost; loopback is told apart for the TLS rule. */
function parseEventsListen(text: string): AgentServiceEvents['listen'] | { message: string; hint: string } {
  const loop = parseListen(text);
  if (!('message' in loop)) return { ...loop, loopback: true };
  const match = /^(?:\[([^\]]*)\]|([^:[\]]*)):(\d{1,5})$/.exec(text.trim());
  if (match === null) return { message: `'${text}' is not HOST:PORT`, hint: LISTEN_HINT };
  const host = (match[1] ?? match[2] ?? '').toLowerCase();
  const port = Number(match[3]);
  if (port > 65535) return { message: `port ${port} is out of range (0 to 65535)`, hint: LISTEN_HINT };
  if (match[1] !== undefined ? !isIPv6(host) : !isIPv4(host))
    return { message: `'${host}' is not an IP address this laptop can listen on`, hint: LISTEN_HINT };
  return { host, port, text, loopback: false };
}

function publicUrlProblem(text: string, httpAllowed: boolean): { message: string; hint: string } | undefined {
  const hint = 'write it like https://prov.example.net:8472/mpprov-events/';
  let url: URL;
  try {
    url = new URL(text);
  } catch {
    return { message: `'${text}' is not a URL`, hint };
  }
  // Plain HTTP to a host elsewhere (a proxy, say) would carry the secret path segment, the
  // receiver's only lock, across the network: only a loopback URL may be http://.
  const plainHere = httpAllowed && url.protocol === 'http:' && !('message' in parseListen(`${url.hostname}:1`));
  if (url.protocol !== 'https:' && !plainHere)
    return { message: 'the service posts events over HTTPS only: public_url must start with https://', hint };
  if (url.username !== '' || url.password !== '')
    return { message: 'public_url must not contain a user name or password', hint };
  if (url.search !== '' || url.hash !== '') return { message: 'public_url must not have a query or fragment', hint };
  return undefined;
}

/** A certificate (and its chain) is kilobytes; anything past this is not one. */
const MAX_CERTIFICATE_FILE_BYTES = 1024 * 1024;

/** The receiver's certificate and key: absolute, a regular file this process can read. The key is not read here. */
async function tlsFileProblem(file: string, what: 'certificate' | 'key'): Promise<string | undefined> {
  if (!isAbsolute(file)) return `the ${what} file must be an absolute path in agent.yaml`;
  try {
    await access(file, constants.R_OK);
  } catch (error) {
    return `${what} file ${file} cannot be read (${(error as NodeJS.ErrnoException).code ?? 'error'})`;
  }
  if (what === 'key') return undefined;
  // A regular file only, capped: a FIFO or a device named here must not hang the loading.
  const read = await readCappedFile(file, MAX_CERTIFICATE_FILE_BYTES);
  if (!read.ok) {
    const why = read.why === 'error' ? (read.code ?? 'error') : read.why === 'too-large' ? 'over 1 MiB' : 'not a file';
    return `certificate file ${file} cannot be read (${why})`;
  }
  if (!read.bytes.includes('-----BEGIN CERTIFICATE-----')) return `certificate file ${file} holds no PEM certificate`;
  return undefined;
}
