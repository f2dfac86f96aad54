import { dirname, isAbsolute, join, resolve } from 'node:path';
import { z } from 'zod';
import { type KeyPath, type Problem, Severity, type UnplacedProblem } from '../core/problem.js';
import { readCappedFile } from '../core/read-capped-file.js';
import { Redactor } from '../core/redact.js';
import { Secret } from '../core/secret.js';
import { readAgentCaFile } from './agent-ca-file.js';
import { AgentService, type AgentServiceSettings, resolveService } from './agent-service.js';
import { type ListenAddress, parseListen } from './loopback-listen.js';
import { readSecretFile } from './secret-file.js';
import { findSecretSpans, writtenSecretPieces } from './secret-spans.js';
import { mapKeyProblems } from './map-keys.js';
import { salvageBySchema } from './salvage-by-schema.js';
import { normaliseDeviceUrl } from './stick-rules.js';
import { encodingProblems } from './text-encoding.js';
import { AdminUsername } from './schema.js';
import { parseYaml, placeProblem } from './yaml-source.js';
import { problemsFromZod } from './zod-issues.js';

/**
 * The laptop-side agent.yaml: where sticks appear, where state lives, timeouts, and default
 * credentials and trust per device. Every key is optional; a missing file means all defaults.
 * It names secrets only by file (password_file, password_credential): each becomes a Secret the
 * moment that file is read, and no inline secret key exists for the schema to mark.
 */

const DEFAULT_AGENT_CONFIG_PATH = '/etc/mpprov/agent.yaml';

/** Keys a person may wrongly give a secret under in agent.yaml, which takes secrets only from files. */
const MISPLACED_SECRET_KEYS: ReadonlySet<string> = new Set(['password', 'passphrase', 'token']);

const AgentTls = z.strictObject({
  fingerprint_sha256: z.string().optional(),
  ca: z.string().min(1).optional().describe('absolute path of a CA certificate file'),
  insecure: z.boolean().optional(),
});

const AgentCredentials = z.strictObject({
  username: AdminUsername.optional(),
  password_file: z.string().min(1).optional(),
  password_credential: z
    .string()
    .min(1)
    .optional()
    .describe('file name in $CREDENTIALS_DIRECTORY (systemd LoadCredential)'),
  tls: AgentTls.optional(),
});

export const AgentConfigFile = z.strictObject({
  version: z.literal(1).optional(),
  media_roots: z.array(z.string().min(1)).optional(),
  profiles_dirs: z.array(z.string().min(1)).optional(),
  state_dir: z.string().min(1).optional(),
  secrets_record: z
    .string()
    .min(1)
    .optional()
    .describe(
      "the secrets record file, e.g. one shared by a team's runners (default: secrets-record.json in state_dir); its key stays in state_dir",
    ),
  log_level: z.enum(['error', 'warn', 'info', 'debug']).optional(),
  concurrency: z.number().int().min(1).max(256).optional(),
  timeouts: z
    .strictObject({
      request_s: z.number().positive().max(3600).optional(),
      restart_s: z.number().positive().max(3600).optional(),
      connect_s: z
        .number()
        .min(0)
        .max(3600)
        .optional()
        .describe('how long the agent waits for an MP that does not answer yet (still booting) before failing it'),
      dot1x_s: z
        .number()
        .positive()
        .max(3600)
        .optional()
        .describe('after a restart, how long a port may take to authorize 802.1X (an address on a dhcp/auto stanza)'),
    })
    .optional(),
  defaults: AgentCredentials.optional(),
  devices: z.record(z.string(), AgentCredentials).optional(),
  service: AgentService.optional(),
  signatures: z
    .strictObject({
      required: z
        .boolean()
        .optional()
        .describe('true: refuse every stick not signed by an allowed signer (default false)'),
      allowed_signers: z
        .string()
        .min(1)
        .optional()
        .describe('OpenSSH allowed_signers file; read at each verification, not here'),
    })
    .optional(),
  when_done: z
    .strictObject({
      eject: z
        .boolean()
        .optional()
        .describe('unmount and power off the stick after its usb.log is synced (default true)'),
    })
    .optional(),
  preflight: z
    .strictObject({
      port: z
        .string()
        .min(1)
        .max(15)
        .describe(
          "this machine's wired interface on the MP's switch port: every 802.1X interface of a stick is tried there first",
        ),
    })
    .optional(),
  status_page: z
    .strictObject({
      listen: z
        .string()
        .min(1)
        .describe('HOST:PORT on loopback only (127.0.0.1:8471, [::1]:8471, localhost:8471); port 0 picks a free one'),
    })
    .optional(),
});
export type AgentConfigFile = z.infer<typeof AgentConfigFile>;

interface DeviceDefaults {
  username?: string;
  password?: Secret;
  tls?: { fingerprintSha256?: string; caPem?: string; insecure?: boolean };
}

export interface AgentConfig {
  file: string | undefined;
  mediaRoots: string[];
  profilesDirs: string[];
  stateDir: string;
  /**
   * agent.yaml `secrets_record` (absolute, relative paths taken from agent.yaml's folder): the
   * record's file when it is not the state directory's; the key that hashes it stays in stateDir.
   */
  secretsRecord?: string;
  logLevel: 'error' | 'warn' | 'info' | 'debug';
  concurrency: number;
  requestTimeoutMs: number;
  restartTimeoutMs: number;
  /** After a restart, how long an 802.1X port may take to authorize (seen as an address from the network). */
  dot1xGraceMs: number;
  /** The agent's boot window: how long an MP that refuses or does not answer yet is waited for (timeouts.connect_s). */
  connectWindowMs: number;
  defaults: DeviceDefaults;
  /** Keyed by normalised device URL (`https://host[:port]`). */
  devices: Map<string, DeviceDefaults>;
  /** The monitoring service's data API, for the post-check; absent: no post-check. */
  service?: AgentServiceSettings;
  /** What the agent does with a stick once its job is written down (agent.yaml `when_done`). */
  whenDone: { eject: boolean };
  /**
   * agent.yaml `signatures` (docs/stick-format.md, "Signed sticks"). `allowedSigners` is only a path:
   * the signature module reads the file at each verification, so an edited file counts at once.
   */
  signatures: { required: boolean; allowedSigners: string | undefined };
  /** agent.yaml `status_page`: where the read-only status page listens (loopback only); absent: no page. */
  statusPage?: { listen: ListenAddress };
  /** agent.yaml `preflight`: the port each stick's 802.1X is tried on before any request to a device. */
  preflight?: { port: string };
}

export interface LoadedAgentConfig {
  config: AgentConfig;
  problems: Problem[];
}

export function defaultAgentConfig(): AgentConfig {
  return {
    file: undefined,
    mediaRoots: ['/media', '/run/media', '/mnt'],
    profilesDirs: [],
    stateDir: '/var/lib/mpprov',
    logLevel: 'info',
    concurrency: 8,
    requestTimeoutMs: 30_000,
    restartTimeoutMs: 120_000,
    dot1xGraceMs: 20_000,
    connectWindowMs: 120_000,
    defaults: {},
    devices: new Map(),
    whenDone: { eject: true },
    signatures: { required: false, allowedSigners: undefined },
  };
}

/** Every secret agent.yaml brought (its passwords, the service token), for the redactor. */
export function agentSecrets(config: AgentConfig): Secret[] {
  const all = [config.defaults.password, ...[...config.devices.values()].map((d) => d.password), config.service?.token];
  return all.filter((s): s is Secret => s !== undefined);
}

/**
 * Which agent.yaml to read: the flag, then MPPROV_AGENT_CONFIG, then the default path. An empty
 * flag or variable names no file (`--agent-config "$CFG"` with CFG unset): read as one, it would
 * be a missing file, so every default, and the laptop's signatures and trust would be dropped
 * without a word.
 */
export function agentConfigPath(flag: string | undefined, env: NodeJS.ProcessEnv = process.env): string {
  const named = (text: string | undefined): string | undefined => (text === '' ? undefined : text);
  return named(flag) ?? named(env.MPPROV_AGENT_CONFIG) ?? DEFAULT_AGENT_CONFIG_PATH;
}

/** agent.yaml is a few KiB; a stick's file has the same cap. */
const MAX_AGENT_CONFIG_BYTES = 256 * 1024;

/** Loads agent.yaml with the same located problems as a stick's file. Never throws for bad input. */
export async function loadAgentConfig(file: string, env: NodeJS.ProcessEnv = process.env): Promise<LoadedAgentConfig> {
  const config = defaultAgentConfig();
  // A regular file only, capped: a FIFO or /dev/zero named by --agent-config must not hang or
  // fill every command that reads it.
  const read = await readCappedFile(file, MAX_AGENT_CONFIG_BYTES);
  if (!read.ok) {
    if (read.why === 'error' && read.code === 'ENOENT') return { config, problems: [] };
    const why = read.why === 'error' ? read.code : read.why === 'too-large' ? 'over 256 KiB' : 'not a regular file';
    return { config, problems: [topProblem(file, `the agent configuration cannot be read (${why})`)] };
  }
  const bytes = read.bytes;
  config.file = file;
  const text = bytes.toString('utf8');
  const parsed = parseYaml(file, text);
  // agent.yaml has no inline secret key, yet a person may write one (`password: ...`): its text
  // as written is never quoted, whatever the parser's recovery made of it (a key path, a key).
  const written = writtenSecretPieces(text, findSecretSpans(parsed.source, MISPLACED_SECRET_KEYS));
  const redactor = new Redactor(written.map((piece) => new Secret(piece)));
  const hide = (problems: Problem[]): Problem[] => problems.map((p) => redactor.value(p));
  const encoding = encodingProblems(bytes, parsed.source);
  if (encoding.length > 0) return { config, problems: hide(encoding) };
  if (parsed.problems.length > 0) return { config, problems: hide(parsed.problems) };
  if (parsed.data === undefined || parsed.data === null) return { config, problems: [] };
  const checked = AgentConfigFile.safeParse(parsed.data);
  // Map entries zod drops unseen (a device keyed `__proto__`) are refused like schema problems.
  const dropped = mapKeyProblems(AgentConfigFile, parsed.data);
  const valid = checked.success && dropped.length === 0;
  const unplaced: UnplacedProblem[] = [
    ...(checked.success ? [] : problemsFromZod(checked.error, parsed.data, AgentConfigFile)),
    ...dropped,
  ];
  // With schema problems every other check still runs, on what the schema accepted, so one
  // typo hides nothing; the configuration used is then the defaults (nothing half-read is used).
  const data = valid ? checked.data : salvageAgentConfig(parsed.data);
  const judged = await applyAgentConfig(data, file, env, config, unplaced);
  const problems = hide(unplaced.map((p) => placeProblem(parsed.source, p)));
  return {
    config: valid ? judged : defaultAgentConfig(),
    problems: valid ? problems : problems.sort((a, b) => a.line - b.line || a.column - b.column),
  };
}

/** The agent.yaml as far as its schema accepts it (salvage-by-schema.ts), to judge the rest. */
function salvageAgentConfig(data: unknown): AgentConfigFile {
  const salvaged = salvageBySchema(AgentConfigFile, data);
  return salvaged !== null && typeof salvaged === 'object' ? salvaged : {};
}

/** Sets `config` from the file's data and checks what relates keys and files; problems go to `unplaced`. */
async function applyAgentConfig(
  data: AgentConfigFile,
  file: string,
  env: NodeJS.ProcessEnv,
  config: AgentConfig,
  unplaced: UnplacedProblem[],
): Promise<AgentConfig> {
  if (data.media_roots !== undefined) config.mediaRoots = data.media_roots;
  if (data.profiles_dirs !== undefined) config.profilesDirs = data.profiles_dirs;
  if (data.state_dir !== undefined) config.stateDir = data.state_dir;
  // Relative to agent.yaml's folder, as an operator reading that file would take it.
  if (data.secrets_record !== undefined) config.secretsRecord = resolve(dirname(file), data.secrets_record);
  if (data.log_level !== undefined) config.logLevel = data.log_level;
  if (data.concurrency !== undefined) config.concurrency = data.concurrency;
  if (data.timeouts?.request_s !== undefined) config.requestTimeoutMs = data.timeouts.request_s * 1000;
  if (data.timeouts?.restart_s !== undefined) config.restartTimeoutMs = data.timeouts.restart_s * 1000;
  if (data.timeouts?.dot1x_s !== undefined) config.dot1xGraceMs = data.timeouts.dot1x_s * 1000;
  if (data.timeouts?.connect_s !== undefined) config.connectWindowMs = data.timeouts.connect_s * 1000;
  if (data.when_done?.eject !== undefined) config.whenDone = { eject: data.when_done.eject };
  if (data.preflight !== undefined) config.preflight = { port: data.preflight.port };
  if (data.signatures !== undefined) {
    // Relative to agent.yaml's folder, as an operator reading that file would take it.
    const allowed =
      data.signatures.allowed_signers === undefined
        ? undefined
        : resolve(dirname(file), data.signatures.allowed_signers);
    config.signatures = { required: data.signatures.required ?? false, allowedSigners: allowed };
    if (config.signatures.required && allowed === undefined) {
      unplaced.push({
        severity: Severity.Error,
        path: ['signatures', 'required'],
        message: 'signatures are required but no allowed_signers file says whose',
        hint: 'add signatures.allowed_signers: /etc/mpprov/allowed_signers',
      });
    }
  }
  // A listen address the schema refused (or left out) was said there.
  if (data.status_page?.listen !== undefined) {
    const listen = parseListen(data.status_page.listen);
    if ('message' in listen)
      unplaced.push({
        severity: Severity.Error,
        path: ['status_page', 'listen'],
        message: listen.message,
        hint: listen.hint,
      });
    else config.statusPage = { listen };
  }
  if (data.defaults !== undefined)
    config.defaults = await resolveCredentials(data.defaults, ['defaults'], env, unplaced);
  for (const [url, entry] of Object.entries(data.devices ?? {})) {
    const key = normaliseDeviceUrl(url);
    if (key === undefined) {
      unplaced.push({
        severity: Severity.Error,
        path: ['devices', url],
        message: `'${url}' is not a device URL`,
        hint: 'write it like https://192.0.2.10',
        atKey: true,
      });
    }
    // Judged under a wrong key too, as a stick's blocks are: one mistake hides none beside it.
    const credentials = await resolveCredentials(entry, ['devices', url], env, unplaced);
    if (key !== undefined) config.devices.set(key, credentials);
  }
  if (data.service?.url !== undefined) {
    const service = await resolveService(data.service, env, unplaced);
    if (service !== undefined) config.service = service;
  }
  return config;
}

async function resolveCredentials(
  entry: z.infer<typeof AgentCredentials>,
  path: KeyPath,
  env: NodeJS.ProcessEnv,
  problems: UnplacedProblem[],
): Promise<DeviceDefaults> {
  const out: DeviceDefaults = {};
  const fail = (at: KeyPath, message: string, hint?: string): void => {
    problems.push({ severity: Severity.Error, path: at, message, ...(hint === undefined ? {} : { hint }) });
  };
  if (entry.username !== undefined) out.username = entry.username;
  if (entry.password_file !== undefined && entry.password_credential !== undefined) {
    fail(
      [...path, 'password_credential'],
      'password is given twice, as password_file and as password_credential',
      'keep one of them',
    );
  } else if (entry.password_file !== undefined && !isAbsolute(entry.password_file)) {
    // As tls.ca and service.token_file: the agent runs from /, so a relative path would be read
    // from wherever the command happened to start.
    fail([...path, 'password_file'], 'the password file must be an absolute path in agent.yaml', 'write it from /');
  } else if (entry.password_file !== undefined) {
    const secret = await readSecretFile(entry.password_file);
    if (typeof secret === 'string') fail([...path, 'password_file'], secret);
    else out.password = secret;
  } else if (entry.password_credential !== undefined) {
    const dir = env.CREDENTIALS_DIRECTORY;
    if (dir === undefined || dir === '') {
      fail(
        [...path, 'password_credential'],
        `credential '${entry.password_credential}' needs $CREDENTIALS_DIRECTORY, which is not set`,
        'run under systemd with LoadCredential=, or use password_file',
      );
    } else if (entry.password_credential.includes('/')) {
      fail([...path, 'password_credential'], 'a credential is a file name, not a path');
    } else {
      const secret = await readSecretFile(join(dir, entry.password_credential));
      if (typeof secret === 'string') fail([...path, 'password_credential'], secret);
      else out.password = secret;
    }
  }
  if (entry.tls !== undefined) {
    const tls: NonNullable<DeviceDefaults['tls']> = {};
    const chosen = [entry.tls.fingerprint_sha256, entry.tls.ca, entry.tls.insecure === true ? true : undefined].filter(
      (v) => v !== undefined,
    );
    if (chosen.length > 1) fail([...path, 'tls'], 'tls takes exactly one of fingerprint_sha256, ca, insecure: true');
    if (entry.tls.fingerprint_sha256 !== undefined) {
      if (!/^(?:[0-9a-fA-F]{2}(?::[0-9a-fA-F]{2}){31}|[0-9a-fA-F]{64})$/.test(entry.tls.fingerprint_sha256)) {
        fail(
          [...path, 'tls', 'fingerprint_sha256'],
          'a SHA-256 fingerprint is 32 bytes in hex (64 hex digits, colons optional)',
        );
      } else tls.fingerprintSha256 = entry.tls.fingerprint_sha256;
    }
    if (entry.tls.ca !== undefined) {
      if (!isAbsolute(entry.tls.ca)) fail([...path, 'tls', 'ca'], 'the CA file must be an absolute path in agent.yaml');
      else {
        const ca = await readAgentCaFile(entry.tls.ca);
        if ('problem' in ca) fail([...path, 'tls', 'ca'], ca.problem);
        else tls.caPem = ca.pem;
      }
    }
    if (entry.tls.insecure === true) tls.insecure = true;
    out.tls = tls;
  }
  return out;
}

function topProblem(file: string, message: string): Problem {
  return { severity: Severity.Error, file, line: 1, column: 1, path: '', message };
}
