import { type DeviceInterface, stanzaKey, WRITE_ONLY_FIELDS } from '../admin-api/index.js';
import { type AdminApi, type DeviceIdentity, isDeviceError, resolveDeviceIdentity } from '../client/index.js';
import { ErrorCode, isMpprovError } from '../core/errors.js';
import { buildPlan, type DesiredDevice, describeStep, type DeviceSnapshot, type Plan } from '../plan/index.js';
import { type DeviceResult, MP_BOOTING, Outcome, type StepRecord } from './apply-events.js';
import { chooseRecovery } from './choose-recovery.js';
import { aclDiff, stanzaDiff } from './plan-diff.js';
import type { ProvisionOptions } from './provision-options.js';
import { rollBack, rollbackWrites, takeBackPending } from './roll-back.js';
import { runStep } from './run-step.js';
import type { SecretsRecord } from './secrets-record.js';
import { secretKnownBy, UpdateSecrets } from './secret-update-policy.js';
import { stepFailure } from './step-failure.js';
import { cutBy, stoppedAtStep } from './stopped-run.js';

// apply-stick.ts (the secrets rework's file) still takes the type from here; it lives in provision-options.ts.
export type { ProvisionOptions } from './provision-options.js';

/**
 * Provisions one device: read its state, plan, and (unless dry-run) run the plan, ride out the
 * restart, verify the active view, and roll back to the snapshot if the device answers wrongly.
 * `mpprov plan` is this function's first half. Never throws: every failure is a result.
 */
export async function provisionDevice(
  desired: DesiredDevice,
  api: AdminApi,
  record: SecretsRecord,
  options: ProvisionOptions,
): Promise<{ result: DeviceResult; plan?: Plan }> {
  const started = Date.now();
  const steps: StepRecord[] = [];
  const warnings: string[] = [];
  const emit = options.onEvent;
  const device = desired.name;
  const finish = (
    outcome: DeviceResult['outcome'],
    message: string,
    extra: Partial<DeviceResult> = {},
  ): DeviceResult => {
    const lastDone = [...steps].reverse().find((s) => s.status === 'done');
    const result: DeviceResult = {
      device,
      url: desired.url,
      outcome,
      message,
      steps,
      warnings,
      durationMs: Date.now() - started,
      ...(lastDone === undefined ? {} : { lastSucceededStep: lastDone.description }),
      ...extra,
    };
    emit({ type: 'device-result', result });
    return result;
  };
  emit({ type: 'device-start', device, url: desired.url });

  let snapshot: DeviceSnapshot;
  try {
    snapshot = await firstContact(api, desired.acl !== undefined, options, (elapsedMs, reason) =>
      emit({ type: 'waiting', device, description: MP_BOOTING, elapsedMs, reason }),
    );
  } catch (error) {
    const cut = cutBy(options.signal);
    if (cut !== undefined) {
      return {
        result: finish(
          Outcome.Failed,
          `stopped by ${cut} while reading the device's configuration, nothing was changed on it`,
          { code: ErrorCode.ApplyFailed, stoppedBy: cut },
        ),
      };
    }
    return { result: finish(Outcome.Failed, sentenceOf(error), { code: codeOf(error) }) };
  }
  // The lockout guard matches the device's addresses against what the URL's host resolves to,
  // so a host name (localhost included) cannot sidestep it; the secrets record keys the device by it too.
  const identity = await resolveDeviceIdentity(desired.url);
  const { addresses } = identity;
  const plan = buildPlan(desired, snapshot, {
    hostAddresses: addresses,
    allowDisconnect: options.allowDisconnect,
    discardPending: options.discardPending,
    secretKnown: secretKnownBy(options.updateSecrets ?? UpdateSecrets.OnChange, record, identity),
  });
  for (const warning of plan.warnings) {
    warnings.push(warning);
    emit({ type: 'warning', device, message: warning });
  }
  emit({
    type: 'plan',
    device,
    steps: plan.steps.map(describeStep),
    hasChanges: plan.hasChanges,
    refusals: plan.refusals.map((r) => r.message),
    diff: stanzaDiff(plan),
    aclDiff: aclDiff(plan),
  });
  if (plan.refusals.length > 0) {
    const message = `refused before any change: ${plan.refusals.map((r) => r.message).join('; ')}`;
    return { result: finish(Outcome.Failed, message, { code: ErrorCode.PlanRefused }), plan };
  }
  if (options.dryRun)
    return {
      result: finish(
        plan.hasChanges ? Outcome.Changed : Outcome.NoChange,
        plan.hasChanges ? `${plan.steps.length} step(s) would run` : 'already matches: nothing to do',
      ),
      plan,
    };
  if (!plan.hasChanges)
    return { result: finish(Outcome.NoChange, 'already matches the configuration: nothing to do, no restart'), plan };

  const total = plan.steps.length;
  let restarted = false;
  let restartRequested = false;
  let activeAfterRestart: DeviceInterface[] | undefined;
  const dot1xNotVisible: string[] = [];
  for (const [index, step] of plan.steps.entries()) {
    const description = describeStep(step);
    const cutBefore = cutBy(options.signal);
    if (cutBefore !== undefined) {
      steps.push({ index, description, status: 'skipped', elapsedMs: 0 });
      const message = `stopped by ${cutBefore} ${stoppedAtStep({ steps: plan.steps, index, description, at: 'before', restarted, restartRequested })}`;
      return { result: finish(Outcome.Failed, message, { code: ErrorCode.ApplyFailed, stoppedBy: cutBefore }), plan };
    }
    if (options.signal?.aborted === true) {
      steps.push({ index, description, status: 'skipped', elapsedMs: 0 });
      return {
        result: finish(
          Outcome.Failed,
          `stopped before "${description}" because the agent is shutting down; nothing after that step was sent`,
          { code: ErrorCode.ApplyFailed },
        ),
        plan,
      };
    }
    emit({ type: 'step-start', device, index, total, description });
    const stepStarted = Date.now();
    try {
      const notes = await runStep(
        step,
        api,
        {
          ...options,
          onRestartRequested: () => {
            restartRequested = true;
            options.onRestartRequested?.();
          },
          ...(activeAfterRestart === undefined ? {} : { activeAfterRestart }),
        },
        (reason, elapsedMs) => emit({ type: 'waiting', device, description, elapsedMs, reason }),
      );
      if (step.kind === 'restart-networking') restarted = true;
      // Only for the step right after the restart: a later step must see the device as it is then.
      activeAfterRestart = notes.activeAfterRestart;
      for (const stanza of notes.dot1xNotVisible) {
        // A warning in every output (terminal, JSON, usb.log), never a verified result.
        const wireless = desired.interfaces.some((i) => i.wireless && stanza.startsWith(`${i.name} `));
        const network = wireless ? 'wireless network' : 'switch port';
        const warning = `${stanza}: applied; 802.1X authorization is not visible through the Admin API (a static address looks the same whether or not the ${network} authorized it): check on the ${network} side (or in the RADIUS log) that it did`;
        dot1xNotVisible.push(stanza);
        warnings.push(warning);
        emit({ type: 'warning', device, message: warning });
      }
      const elapsedMs = Date.now() - stepStarted;
      steps.push({ index, description, status: 'done', elapsedMs });
      emit({ type: 'step-done', device, index, description, elapsedMs });
    } catch (error) {
      const elapsedMs = Date.now() - stepStarted;
      const cut = options.cutRequests === true ? cutBy(options.signal) : undefined;
      if (cut !== undefined) {
        // A person stopped the run: nothing more is sent (no take-back, no roll-back), and the
        // result says exactly where it stopped and what may be left on the device.
        const message = `stopped by ${cut} ${stoppedAtStep({ steps: plan.steps, index, description, at: 'during', restarted, restartRequested })}`;
        steps.push({ index, description, status: 'failed', elapsedMs, error: `stopped by ${cut}` });
        emit({ type: 'step-failed', device, index, description, error: `stopped by ${cut}`, elapsedMs });
        return { result: finish(Outcome.Failed, message, { code: ErrorCode.ApplyFailed, stoppedBy: cut }), plan };
      }
      const failure = stepFailure(error, step, description, options.restartTimeoutMs);
      steps.push({ index, description, status: 'failed', elapsedMs, error: failure.message });
      emit({ type: 'step-failed', device, index, description, error: failure.message, elapsedMs });
      if (failure.deviceLost) {
        return { result: finish(Outcome.Failed, failure.message, { code: failure.code, deviceLost: true }), plan };
      }
      const recovery = chooseRecovery({
        failure,
        steps: plan.steps,
        failedIndex: index,
        restarted,
        rollback: options.rollback,
      });
      if (recovery.kind === 'roll-back') {
        // Announced only when something will be written back; the result says what was.
        const writes = rollbackWrites(snapshot, plan);
        if (writes > 0)
          emit({
            type: 'rollback',
            device,
            message: `rolling back ${writes} stanza(s) to the configuration before this run`,
          });
        const context = {
          dot1xRefused: failure.dot1xRefused ?? [],
          wireless: new Set(desired.interfaces.filter((i) => i.wireless).map((i) => i.name)),
        };
        const rollback = await rollBack(
          api,
          snapshot,
          plan,
          options,
          (reason, ms) => emit({ type: 'waiting', device, description: 'roll back', elapsedMs: ms, reason }),
          context,
        );
        return {
          result: finish(Outcome.Failed, `${failure.message}; ${rollback.message}`, {
            code: failure.code,
            rollback,
            ...(context.dot1xRefused.length === 0 ? {} : { dot1xRefused: [...context.dot1xRefused] }),
          }),
          plan,
        };
      }
      if (recovery.kind === 'take-back') {
        const takenBack = await takeBackPending(api, snapshot, recovery.stanzas);
        const message = takenBack === '' ? failure.message : `${failure.message.replace(/\.$/, '')}; ${takenBack}`;
        return { result: finish(Outcome.Failed, message, { code: failure.code }), plan };
      }
      return { result: finish(Outcome.Failed, failure.message, { code: failure.code }), plan };
    }
  }
  const recordProblem = await rememberSecrets(record, identity, desired, plan);
  if (recordProblem !== undefined) {
    // The device is configured; only the bookkeeping failed, and its cost is a re-sent secret.
    warnings.push(recordProblem);
    emit({ type: 'warning', device, message: recordProblem });
  }
  if (dot1xNotVisible.length > 0) {
    const message = `applied: ${changeSummary(plan)}; the settings are active as requested, but the 802.1X authorization of ${dot1xNotVisible.join(', ')} is not visible through the Admin API (static address)`;
    return { result: finish(Outcome.Changed, message, { dot1xNotVisible }), plan };
  }
  return { result: finish(Outcome.Changed, `applied and verified: ${changeSummary(plan)}`), plan };
}

/**
 * The snapshot, read at the first contact. An MP that refuses the connection or does not answer
 * may still be booting: within the boot window it is probed until it answers (each failed probe an
 * event), then read; a wrong password, TLS or pin failure ends the wait at once (the client's).
 */
async function firstContact(
  api: AdminApi,
  withAcl: boolean,
  options: ProvisionOptions,
  onWait: (elapsedMs: number, reason: string) => void,
): Promise<DeviceSnapshot> {
  const windowMs = options.connectWindowMs ?? 0;
  const started = Date.now();
  try {
    return await readSnapshot(api, withAcl);
  } catch (error) {
    const notYet =
      isDeviceError(error) && (error.code === ErrorCode.DeviceUnreachable || error.code === ErrorCode.DeviceTimeout);
    const left = windowMs - (Date.now() - started);
    if (!notYet || left <= 0 || options.signal?.aborted === true) throw error;
    onWait(Date.now() - started, error.message);
    await api.waitUntilAnswering({
      timeoutMs: left,
      onAttempt: (_elapsedMs, reason) => onWait(Date.now() - started, reason),
      ...(options.signal === undefined ? {} : { signal: options.signal }),
    });
    return readSnapshot(api, withAcl);
  }
}

async function readSnapshot(api: AdminApi, withAcl: boolean): Promise<DeviceSnapshot> {
  const active = await api.listInterfaces('active');
  const pending = await api.listInterfaces('pending');
  const capability = await api.getCapability();
  const acl = withAcl ? await api.listAcl() : undefined;
  // After the answers above: the device's clock as their Date headers tell it.
  const clock = api.deviceClock?.();
  return { active, pending, capability, acl, ...(clock === undefined ? {} : { clock }) };
}

async function rememberSecrets(
  record: SecretsRecord,
  device: DeviceIdentity,
  desired: DesiredDevice,
  plan: Plan,
): Promise<string | undefined> {
  for (const iface of desired.interfaces) {
    for (const stanza of iface.stanzas) {
      const key = stanzaKey(stanza.name, stanza.family);
      for (const field of WRITE_ONLY_FIELDS) {
        const value = stanza.secrets[field];
        if (value === undefined) record.forget(device, key, field);
        else record.remember(device, key, field, value);
      }
    }
  }
  for (const change of plan.stanzas)
    if (change.action === 'delete') record.forget(device, stanzaKey(change.name, change.family));
  try {
    await record.save(device);
    return undefined;
  } catch (error) {
    return record.saveProblem(error);
  }
}

function changeSummary(plan: Plan): string {
  const counts = { create: 0, update: 0, delete: 0 };
  for (const s of plan.stanzas) if (s.action !== 'unchanged') counts[s.action] += 1;
  const acl = plan.steps.filter((s) => s.kind === 'add-acl-rule' || s.kind === 'remove-acl-rule').length;
  const parts = [
    counts.create > 0 ? `${counts.create} stanza(s) added` : '',
    counts.update > 0 ? `${counts.update} changed` : '',
    counts.delete > 0 ? `${counts.delete} removed` : '',
    acl > 0 ? `${acl} ACL change(s)` : '',
  ].filter((p) => p !== '');
  return parts.length === 0 ? 'pending changes discarded' : parts.join(', ');
}

function sentenceOf(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}

function codeOf(error: unknown): string {
  return isMpprovError(error) ? error.code : ErrorCode.Internal;
}
