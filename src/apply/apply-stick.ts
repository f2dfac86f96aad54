import type { ValidatedStick } from '../certs/index.js';
import { type AdminApi, createAdminClient, type DeviceTarget, resolveDeviceIdentity } from '../client/index.js';
import {
  type AgentConfig,
  agentSecrets,
  type DeviceAccess,
  hasErrors,
  DEFAULT_WAIT_MEASURING_S,
  normaliseDeviceUrl,
  PATHS_NOT_CHECKED,
  type Problem,
} from '../config/index.js';
import { didYouMean } from '../config/did-you-mean.js';
import { ErrorCode, MpprovError } from '../core/errors.js';
import { Redactor } from '../core/redact.js';
import type { Secret } from '../core/secret.js';
import { desiredDevice, type Plan } from '../plan/index.js';
import { type ApplyEvent, type ApplyEventSink, type DeviceResult, Outcome } from './apply-events.js';
import { allPathsMeasuring, pathsNotChecked, type ServiceReport } from './path-report.js';
import { type DeviceLockSettings, lockDeviceAt } from './device-file-lock.js';
import { provisionDevice, type ProvisionOptions } from './provision-device.js';
import { openSecretsRecord, type RecordWarning } from './secrets-record.js';
import { servicePostCheck, wantsPostCheck } from './service-post-check.js';
import type { ServiceSide } from './service-side.js';
import { cutBy } from './stopped-run.js';

export interface StickApplyOptions extends Omit<ProvisionOptions, 'onEvent'> {
  agent: AgentConfig;
  concurrency: number;
  onEvent: ApplyEventSink;
  /** Called first, for each of the stick's problems (they are known before anything is sent). */
  onProblem?: (problem: Problem) => void;
  /**
   * Said once per run rather than per device (the secrets record cannot be read, or was made with
   * another key). Without it, the first device's warning event carries it.
   */
  onWarning?: (message: string, kind: RecordWarning['kind']) => void;
  /** Device client factory; the real undici client unless a caller brings its own. */
  connect?: (target: DeviceTarget, onWarning: (message: string) => void) => AdminApi;
  /**
   * The service side (one client, one watch) when it outlives this run: the daemon's, shared by
   * its jobs. Default: one made from agent.service for this run, shared by its devices and closed
   * after it.
   */
  serviceSide?: ServiceSide;
  /** Round spacing of the post-check, for tests and the demo (`firstMs`); default the watch's 2 s. */
  serviceBackoff?: { firstMs: number; maxMs: number };
  /**
   * Only these monitoring points (by `name`), the CLI's `--limit`: the others get no request at
   * all and no result. Every name must be in the file (limitProblem); the daemon never limits.
   */
  limit?: readonly string[];
  /** A lock file per device in a state folder, held while a run changes it; a dry run takes none. */
  deviceLock?: DeviceLockSettings;
  /**
   * Why no post-check is made although the laptop configures the service: the agent passed in
   * then has no service block (the CLI's --allow-unsigned lends no token), so each path is said
   * not checked for this reason, and no warning claims agent.yaml lacks one.
   */
  serviceUnchecked?: string;
}

export const StickOutcome = { ...Outcome, Invalid: 'invalid' } as const;
export type StickOutcome = (typeof StickOutcome)[keyof typeof StickOutcome];

export interface StickResult {
  file: string;
  configSha256: string;
  outcome: StickOutcome;
  problems: Problem[];
  devices: DeviceResult[];
  plans: Plan[];
}

/**
 * Every secret a run of this stick can hold: the stick's own, agent.yaml's, and per device the
 * Basic credentials `user:password` (a device may echo its Authorization header, in base64).
 */
export function stickSecrets(stick: ValidatedStick, agent: AgentConfig): Secret[] {
  const access = stick.access ?? [];
  return [
    ...stick.secrets,
    ...agentSecrets(agent),
    ...access.flatMap((a) => [a.password, a.password.prefixed(`${a.username}:`)]),
  ];
}

/**
 * The whole job for one validated configuration file: provision every Monitoring Point in it,
 * several at once; one failing device never stops the others. Nothing reaches a device unless the
 * whole file is valid, with each device's access resolved (validateStick with `agent`).
 */
export async function applyStick(stick: ValidatedStick, options: StickApplyOptions): Promise<StickResult> {
  for (const problem of stick.problems) options.onProblem?.(problem);
  const result: StickResult = {
    file: stick.file,
    configSha256: stick.sha256,
    outcome: StickOutcome.Invalid,
    problems: stick.problems,
    devices: [],
    plans: [],
  };
  if (hasErrors(stick.problems) || stick.model === undefined) return result;
  const accesses = stick.access;
  if (accesses === undefined)
    throw new MpprovError(ErrorCode.Internal, 'applyStick needs a stick validated with the agent configuration');
  // --limit narrows what is sent, never what is checked: the file was validated whole above (one
  // file, one truth). A problem in a device left out is still a problem of the file this run
  // trusts for the selected ones, and applying part of a broken file would hide it until later.
  if (options.limit !== undefined) {
    const problem = limitProblem(stick, options.limit);
    if (problem !== undefined) throw new MpprovError(ErrorCode.Usage, problem);
  }
  // The file index of each selected device (desiredDevice and the model are by file index); its
  // result and plan take the next slot, so a limited run's lists hold only the selected devices.
  const selected = accesses.flatMap((access, fileIndex) =>
    options.limit === undefined || options.limit.includes(access.name) ? [{ access, fileIndex }] : [],
  );

  // A device may quote our own request back in an error (an echoed body, a field value, its
  // Authorization header): every event and result leaving the engine passes the one redactor.
  const redactor = new Redactor(stickSecrets(stick, options.agent));
  const onEvent = (event: ApplyEvent): void => options.onEvent(redactor.value(event));
  const record = await openSecretsRecord(options.agent.stateDir, { file: options.agent.secretsRecord });
  const urls = stick.model.monitoring_points.map((mp) => normaliseDeviceUrl(mp.url) ?? mp.url);
  // By device, as the record keys it (a URL that does not even parse is taken as written).
  const identities = await Promise.all(urls.map((url) => resolveDeviceIdentity(url).catch(() => url)));
  for (const { kind, sentence } of record.warnings(identities)) {
    if (options.onWarning !== undefined) options.onWarning(redactor.text(sentence), kind);
    else if (accesses[0] !== undefined) onEvent({ type: 'warning', device: accesses[0].name, message: sentence });
  }
  // One client and one watch for the whole run: every device's post-check shares the token's
  // limit and the same rounds. A dry run reads the service only for the paths it would create.
  const settings = options.agent.service;
  const readsService = !options.dryRun || stick.model.monitoring_points.some((mp) => (mp.paths?.length ?? 0) > 0);
  const ownSide = options.serviceSide === undefined && settings !== undefined && readsService;
  const side =
    settings === undefined || !readsService
      ? undefined
      : (options.serviceSide ??
        // Loaded only here: a run without a service block never loads the service's client, models
        // and event follower (the plan and apply bundle's start).
        (await import('./service-side.js')).createServiceSide(settings, {
          roundMs: options.serviceBackoff?.firstMs,
          stateDir: options.agent.stateDir,
        }));
  const service = options.dryRun ? undefined : side;
  const postChecks: Promise<void>[] = [];
  const jobs = selected.map(
    ({ access, fileIndex }: { access: DeviceAccess; fileIndex: number }, index) =>
      async (): Promise<void> => {
        const cut = cutBy(options.signal);
        if (cut !== undefined) {
          // Stopped before this device's turn: it is not contacted at all.
          const skipped: DeviceResult = {
            device: access.name,
            url: access.url,
            outcome: Outcome.Failed,
            message: `stopped by ${cut} before mpprov contacted it; nothing was sent to it`,
            code: ErrorCode.ApplyFailed,
            steps: [],
            warnings: [],
            durationMs: 0,
            stoppedBy: cut,
          };
          result.devices[index] = skipped;
          onEvent({ type: 'device-result', result: skipped });
          return;
        }
        const desired = desiredDevice(stick, fileIndex);
        const mp = stick.model?.monitoring_points[fileIndex];
        let restartedAt: number | undefined;
        const hostname = mp?.service_hostname ?? mp?.name ?? access.name;
        const onWarning = (message: string): void => onEvent({ type: 'warning', device: access.name, message });
        const target: DeviceTarget = {
          url: access.url,
          username: access.username,
          password: access.password,
          trust: access.trust,
        };
        const api =
          options.connect?.(target, onWarning) ??
          createAdminClient(target, {
            requestTimeoutMs: options.agent.requestTimeoutMs,
            onWarning,
            // The CLI's stop cuts the request under way; the daemon's lets it finish.
            ...(options.cutRequests === true && options.signal !== undefined ? { signal: options.signal } : {}),
          });
        const lock =
          options.deviceLock === undefined || options.dryRun
            ? undefined
            : await lockDeviceAt(access.url, options.deviceLock, options.signal);
        if (lock !== undefined && 'failure' in lock) {
          const busy = redactor.value(failedUnstarted(access, lock.failure, ErrorCode.DeviceBusy));
          result.devices[index] = busy;
          onEvent({ type: 'device-result', result: busy });
          await api.close().catch(() => undefined);
          return;
        }
        try {
          const targets = (mp?.paths ?? []).map((p) => p.target);
          // With a post-check (or paths to report), the device's result waits for it, so its one
          // device-result event carries both.
          let held: DeviceResult | undefined;
          const deviceEvents = (event: ApplyEvent): void => {
            if (event.type === 'device-result' && (service !== undefined || targets.length > 0)) held = event.result;
            else onEvent(event);
          };
          // Under the lock, the record as the run before left it: it may have just applied (and
          // recorded) the very secrets this run brings, which must not count as changed again.
          const current =
            lock === undefined
              ? record
              : await openSecretsRecord(options.agent.stateDir, { file: options.agent.secretsRecord });
          const { result: provisioned, plan } = await provisionDevice(desired, api, current, {
            ...options,
            dot1xGraceMs: options.dot1xGraceMs ?? options.agent.dot1xGraceMs,
            onRestartRequested: () => (restartedAt = Date.now()),
            onEvent: deviceEvents,
          });
          await api.close().catch(() => undefined);
          // Done with the device: a run waiting for it need not wait for this one's post-check too.
          await lock?.release();
          let device = provisioned;
          if (options.dryRun && side !== undefined && targets.length > 0 && plan !== undefined) {
            // plan lists the paths it would create: read from the service, never written.
            const paths = await side.watch
              .planPaths(hostname, mp?.paths ?? [], { signal: options.signal })
              .catch(() => []);
            onEvent({ type: 'service-paths-plan', device: access.name, hostname, paths });
          }
          if (plan !== undefined) result.plans[index] = plan;
          if (service !== undefined && settings !== undefined && wantsPostCheck(provisioned)) {
            // The post-check waits outside the device's concurrency slot: the next device starts
            // while this one's MP reconnects and its paths begin to measure (the watch asks for
            // every waiting MP in one round, so the waits cost the service nothing per device).
            postChecks.push(
              servicePostCheck(
                {
                  side: service,
                  waitConnectedS: settings.waitConnectedS,
                  waitMeasuringS: settings.waitMeasuringS ?? DEFAULT_WAIT_MEASURING_S,
                },
                access.name,
                hostname,
                mp?.paths ?? [],
                // Data counts from the restart; an MP not restarted (no change) measures from the last hour.
                { signal: options.signal, since: restartedAt, onEvent },
              )
                .catch((error: unknown) => internalOutcome(hostname, error))
                .then((outcome) => {
                  const checked = { ...provisioned, service: outcome };
                  if (held !== undefined) onEvent({ type: 'device-result', result: checked });
                  result.devices[index] = redactor.value(checked);
                }),
            );
            return;
          }
          if (settings === undefined && targets.length > 0 && wantsPostCheck(provisioned)) {
            const why = options.serviceUnchecked;
            if (why === undefined)
              onWarning(`${targets.length} path(s) ${PATHS_NOT_CHECKED}: agent.yaml has no service block`);
            if (!options.dryRun)
              device = { ...provisioned, pathsNotChecked: pathsNotChecked(targets, why ?? PATHS_NOT_CHECKED) };
          }
          if (held !== undefined) onEvent({ type: 'device-result', result: device });
          result.devices[index] = redactor.value(device);
        } catch (error) {
          // provisionDevice reports failures as results; this is a bug guard, kept as one result too.
          const message = error instanceof Error ? error.message : String(error);
          const failed = redactor.value(failedUnstarted(access, `internal error: ${message}`, ErrorCode.Internal));
          result.devices[index] = failed;
          onEvent({ type: 'device-result', result: failed });
        } finally {
          await api.close().catch(() => undefined);
          await lock?.release();
        }
      },
  );
  try {
    await runWithConcurrency(jobs, Math.max(1, options.concurrency));
    await Promise.all(postChecks);
  } finally {
    if (ownSide) side?.stopEvents();
    if (ownSide) await side?.client.close().catch(() => undefined);
  }
  result.outcome = stickOutcome(result.devices);
  return result;
}

/** A device's result when it failed before any step ran: its lock was held, or a bug guard caught it. */
function failedUnstarted(access: { name: string; url: string }, message: string, code: ErrorCode): DeviceResult {
  return {
    device: access.name,
    url: access.url,
    outcome: Outcome.Failed,
    message,
    code,
    steps: [],
    warnings: [],
    durationMs: 0,
  };
}

/** A post-check that threw (a bug guard: it reports every service problem as an outcome). */
function internalOutcome(hostname: string, error: unknown): ServiceReport {
  return {
    kind: 'unchecked',
    connected: false,
    hostname,
    sentence: `not checked: internal error in mpprov (${error instanceof Error ? error.message : String(error)})`,
    waitedMs: 0,
    polls: 0,
  };
}

/**
 * Why `limit` cannot select from this file, as one sentence naming the unknown names and the
 * names the file has; undefined when every name is in it. `--limit` is a usage error then.
 */
export function limitProblem(stick: ValidatedStick, limit: readonly string[]): string | undefined {
  const names = (stick.model?.monitoring_points ?? [])
    .map((mp) => mp.name)
    .filter((n): n is string => typeof n === 'string');
  const unknown = [...new Set(limit.filter((n) => !names.includes(n)))];
  if (unknown.length === 0) return undefined;
  const guesses = unknown.map((n) => didYouMean(n, names)).filter((g): g is string => g !== undefined);
  const quoted = (list: readonly string[]): string => list.map((n) => `'${n}'`).join(', ');
  return (
    `--limit names ${quoted(unknown)}, ${unknown.length === 1 ? 'which is not a monitoring point' : 'which are not monitoring points'} of ${stick.file}` +
    (guesses.length > 0 ? ` (did you mean ${quoted(guesses)}?)` : '') +
    `; its monitoring points are ${names.length === 0 ? 'none' : quoted(names)}`
  );
}

/**
 * Devices configured and verified but not confirmed by the monitoring service: not connected, or
 * a path of their stick not confirmed measuring. With no failed device, `mpprov apply` exits 3
 * for them (docs/service-model.md, "The post-check").
 */
export function notConfirmed(result: StickResult): DeviceResult[] {
  if (result.outcome !== StickOutcome.Changed && result.outcome !== StickOutcome.NoChange) return [];
  return result.devices.filter(
    (d) => d?.service !== undefined && (!d.service.connected || !allPathsMeasuring(d.service)),
  );
}

function stickOutcome(devices: readonly DeviceResult[]): StickOutcome {
  if (devices.some((d) => d.outcome === Outcome.Failed)) return StickOutcome.Failed;
  if (devices.some((d) => d.outcome === Outcome.Changed)) return StickOutcome.Changed;
  return StickOutcome.NoChange;
}

async function runWithConcurrency(jobs: (() => Promise<void>)[], limit: number): Promise<void> {
  let next = 0;
  const worker = async (): Promise<void> => {
    while (next < jobs.length) {
      const job = jobs[next++];
      if (job !== undefined) await job();
    }
  };
  await Promise.all(Array.from({ length: Math.min(limit, jobs.length) }, worker));
}
