import { validateStick } from '../certs/index.js';
import { type AdminApi, createAdminClient, type DeviceTarget } from '../client/index.js';
import { type AgentConfig, type DeviceAccess, hasErrors, type Problem, resolveDeviceAccess } from '../config/index.js';
import { ErrorCode } from '../core/errors.js';
import { desiredDevice, type Plan } from '../plan/index.js';
import { type ApplyEvent, type ApplyEventSink, type DeviceResult, Outcome } from './apply-events.js';
import { redactSecrets } from './redact-secrets.js';
import { provisionDevice, type ProvisionOptions } from './provision-device.js';
import { openSecretsRecord } from './secrets-record.js';

export interface StickApplyOptions extends Omit<ProvisionOptions, 'onEvent'> {
  agent: AgentConfig;
  concurrency: number;
  /** How the file is named in problems: as given on the command line, or as on the stick. */
  label?: string;
  onEvent: ApplyEventSink;
  /** Called for each validation problem as soon as it is known. */
  onProblem?: (problem: Problem) => void;
  /** Device client factory; the real undici client unless a caller brings its own. */
  connect?: (target: DeviceTarget, onWarning: (message: string) => void) => AdminApi;
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
 * The whole job for one configuration file: validate it and everything it names, then provision
 * every Monitoring Point in it, several at once; one failing device never stops the others.
 * Nothing reaches a device unless the whole file is valid.
 */
export async function applyStick(configFile: string, options: StickApplyOptions): Promise<StickResult> {
  const stick = await validateStick(configFile, options.label === undefined ? {} : { label: options.label });
  for (const problem of stick.problems) options.onProblem?.(problem);
  const result: StickResult = { file: stick.file, configSha256: stick.sha256, outcome: StickOutcome.Invalid, problems: stick.problems, devices: [], plans: [] };
  if (hasErrors(stick.problems) || stick.stick === undefined) return result;

  const accesses: ({ access: DeviceAccess } | { problem: Problem })[] = stick.stick.monitoring_points.map((_, index) => {
    const resolved = resolveDeviceAccess(stick, index, options.agent);
    return 'access' in resolved ? resolved : { problem: stick.place(resolved.problem) };
  });
  const blocked = accesses.flatMap((a) => ('problem' in a ? [a.problem] : []));
  if (blocked.length > 0) {
    for (const problem of blocked) options.onProblem?.(problem);
    result.problems = [...result.problems, ...blocked];
    return result;
  }

  const secretValues = [
    ...[...stick.secrets.values()].map((s) => s.reveal()),
    // The password, and the Basic credentials as a device could echo its Authorization header.
    ...accesses.flatMap((a) =>
      'access' in a ? [a.access.password.reveal(), Buffer.from(`${a.access.username}:${a.access.password.reveal()}`).toString('base64')] : [],
    ),
  ];
  const onEvent = (event: ApplyEvent): void => options.onEvent(redactSecrets(event, secretValues));
  const record = await openSecretsRecord(options.agent.stateDir);
  const jobs = stick.stick.monitoring_points.map((_, index) => async (): Promise<void> => {
    const { access } = accesses[index] as { access: DeviceAccess };
    const desired = desiredDevice(stick, index);
    const onWarning = (message: string): void => onEvent({ type: 'warning', device: access.name, message });
    const target: DeviceTarget = { url: access.url, username: access.username, password: access.password, trust: access.trust };
    const api = options.connect?.(target, onWarning) ?? createAdminClient(target, { requestTimeoutMs: options.agent.requestTimeoutMs, onWarning });
    try {
      const { result: device, plan } = await provisionDevice(desired, api, record, { ...options, dot1xGraceMs: options.dot1xGraceMs ?? options.agent.dot1xGraceMs, onEvent });
      result.devices[index] = redactSecrets(device, secretValues);
      if (plan !== undefined) result.plans[index] = plan;
    } catch (error) {
      // provisionDevice reports failures as results; this is a bug guard, kept as one result too.
      const message = error instanceof Error ? error.message : String(error);
      const failed: DeviceResult = {
        device: access.name, url: access.url, outcome: Outcome.Failed, message: `internal error: ${message}`,
        code: ErrorCode.Internal, steps: [], warnings: [], durationMs: 0,
      };
      result.devices[index] = failed;
      onEvent({ type: 'device-result', result: failed });
    } finally {
      await api.close().catch(() => undefined);
    }
  });
  await runWithConcurrency(jobs, Math.max(1, options.concurrency));
  result.outcome = stickOutcome(result.devices);
  return result;
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

