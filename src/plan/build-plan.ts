import { checkAgainstDevice } from './device-checks.js';
import { judgeDeviceClock } from './device-clock-rule.js';
import { compareStanza } from './compare-stanzas.js';
import { foreignPendingSteps } from './foreign-pending.js';
import { indexStanzas } from './index-stanzas.js';
import { lockoutRefusal, managementInterface, managementPort } from './lockout-guard.js';
import { vlanDot1xRefusals } from './vlan-dot1x-rule.js';
import { vlanRuleOrder } from './vlan-order.js';
import type {
  DesiredDevice,
  DesiredFile,
  DesiredStanza,
  DeviceSnapshot,
  ExpectedStanza,
  FieldChange,
  Plan,
  PlanOptions,
  PlanRefusal,
  StanzaChange,
  Step,
} from './plan-types.js';
import {
  type AclRule,
  type DeviceInterface,
  type Family,
  FILE_SLOTS,
  stanzaKey,
  WRITE_ONLY_FIELDS,
} from '../admin-api/index.js';

/**
 * Computes the ordered steps that take the device from `snapshot` to `desired`, following the
 * vendor's rules: files before the stanzas that name them, 802.1X off by re-posting without wpa_*,
 * an SSID change as delete/restart/add/restart, VLANs after their parents (but a VLAN's 802.1X
 * off before its parent's, vlan-order.ts), and no networking restart when nothing changes. Pure: `mpprov plan` prints it, `mpprov apply` runs it.
 */
export function buildPlan(desired: DesiredDevice, snapshot: DeviceSnapshot, options: PlanOptions): Plan {
  const active = indexStanzas(snapshot.active);
  const refusals: PlanRefusal[] = [];
  const steps: Step[] = [];
  const managed = new Set(desired.interfaces.map((i) => i.name));
  const desiredByKey = new Map<string, DesiredStanza>();
  for (const iface of desired.interfaces)
    for (const s of iface.stanzas) desiredByKey.set(stanzaKey(s.name, s.family), s);

  const pending = foreignPendingSteps(snapshot, desiredByKey, options.discardPending);
  refusals.push(...pending.refusals);
  steps.push(...pending.steps);
  refusals.push(...checkAgainstDevice(desired, snapshot));
  refusals.push(...vlanDot1xRefusals(desired, snapshot, options.discardPending));

  // What changes, stanza by stanza.
  const stanzas: StanzaChange[] = [];
  const toPost: Posted[] = [];
  for (const [key, stanza] of desiredByKey) {
    const current = active.get(key)?.stanza;
    const changes = compareStanza(stanza, current, (field, value) => options.secretKnown(key, field, value));
    const action = current == null ? 'create' : changes.length > 0 ? 'update' : 'unchanged';
    const unchangedSecrets = WRITE_ONLY_FIELDS.filter(
      (f) => stanza.secrets[f] !== undefined && !changes.some((c) => c.field === f),
    );
    stanzas.push({ name: stanza.name, family: stanza.family, action, changes, unchangedSecrets });
    if (action !== 'unchanged') toPost.push({ name: stanza.name, family: stanza.family, action, changes, stanza });
  }
  for (const [key, { name, family, stanza }] of active) {
    if (desiredByKey.has(key)) continue;
    if (managed.has(name) || (desired.prune && stanza != null)) {
      stanzas.push({
        name,
        family,
        action: 'delete',
        changes: compareStanza(undefined, stanza, () => false),
        unchangedSecrets: [],
      });
    }
  }

  const mgmt = managementInterface(snapshot.active, desired.url, options.hostAddresses);
  if (!desired.allowDisconnect && !options.allowDisconnect) {
    const refusal = lockoutRefusal(stanzas, mgmt, managementPort(snapshot.active, mgmt));
    if (refusal !== undefined) refusals.push(refusal);
  }

  const toDelete = stanzas.filter((s) => s.action === 'delete');

  const uploads = filesToUpload(desired, toPost, snapshot.active);
  if (uploads.length > 0) steps.push({ kind: 'upload-files', files: uploads });

  // An SSID cannot be changed in place: delete, restart, add, restart (vendor procedure).
  const ssidChanged = new Set(
    toPost
      .filter((s) => s.action === 'update' && s.changes.some((c) => c.field === 'ssid' && c.from !== undefined))
      .map((s) => s.name),
  );
  if (ssidChanged.size > 0) {
    const removed: ExpectedStanza[] = [];
    for (const [, { name, family }] of active) {
      if (!ssidChanged.has(name)) continue;
      steps.push({ kind: 'delete-stanza', name, family, reason: 'the SSID changes: the old network is removed first' });
      removed.push({ name, family, stanza: null });
    }
    steps.push({ kind: 'verify-pending', expected: removed });
    steps.push({
      kind: 'restart-networking',
      reason: `remove the old SSID of ${[...ssidChanged].join(', ')}`,
      expected: removed,
    });
    steps.push({ kind: 'verify-active', expected: removed });
  }

  const requests: ({ kind: 'delete'; change: StanzaChange } | { kind: 'post'; posted: Posted })[] = [
    ...toDelete.map((change) => ({ kind: 'delete' as const, change })),
    ...toPost.map((posted) => ({ kind: 'post' as const, posted })),
  ];
  const ordered = vlanRuleOrder(requests, (r) =>
    r.kind === 'delete'
      ? { name: r.change.name, kind: 'delete', withDot1x: false, turnsDot1xOff: false }
      : {
          name: r.posted.name,
          kind: 'post',
          withDot1x: typeof r.posted.stanza.fields.wpa_key_mgmt === 'string',
          turnsDot1xOff: r.posted.changes.some(
            (c) => c.field === 'wpa_key_mgmt' && c.from !== undefined && c.to === undefined,
          ),
        },
  );
  for (const r of ordered) {
    if (r.kind === 'delete') {
      const s = r.change;
      steps.push({
        kind: 'delete-stanza',
        name: s.name,
        family: s.family,
        reason: managed.has(s.name) ? 'not in the file for this interface' : 'prune: interface not in the file',
      });
    } else {
      steps.push({
        kind: 'post-stanza',
        stanza: r.posted.stanza,
        action: ssidChanged.has(r.posted.name) ? 'create' : r.posted.action,
      });
    }
  }

  const restartNeeded = toPost.length > 0 || toDelete.length > 0 || pending.steps.length > 0;
  if (restartNeeded) {
    const expected: ExpectedStanza[] = [
      ...toPost.map((s) => ({ name: s.name, family: s.family, stanza: s.stanza })),
      ...toDelete.map((s) => ({ name: s.name, family: s.family, stanza: null })),
    ];
    steps.push({ kind: 'verify-pending', expected });
    steps.push({ kind: 'restart-networking', reason: `${toPost.length + toDelete.length} stanza change(s)`, expected });
    steps.push({ kind: 'verify-active', expected });
  }

  // ACL changes take effect at once; they go last so a rule cannot cut the agent off mid-plan.
  if (desired.acl !== undefined) {
    const have = snapshot.acl ?? [];
    for (const rule of desired.acl)
      if (!have.some((r) => sameRule(r, rule))) steps.push({ kind: 'add-acl-rule', rule });
    for (const rule of have)
      if (!desired.acl.some((r) => sameRule(r, rule))) steps.push({ kind: 'remove-acl-rule', rule });
  }

  const clock = judgeDeviceClock(
    snapshot.clock,
    toPost.map((p) => p.stanza),
  );
  refusals.push(...clock.refusals);

  return {
    device: { name: desired.name, url: desired.url },
    managementInterface: mgmt,
    stanzas,
    steps,
    refusals,
    warnings: clock.warnings,
    hasChanges: steps.length > 0,
  };
}

/** A desired stanza the device does not have as it is: posted by the plan. */
interface Posted {
  name: string;
  family: Family;
  action: 'create' | 'update';
  changes: FieldChange[];
  stanza: DesiredStanza;
}

/** Files named by stanzas about to be posted that the device does not already hold under that name. */
function filesToUpload(
  desired: DesiredDevice,
  toPost: readonly Posted[],
  activeView: readonly DeviceInterface[],
): DesiredFile[] {
  const onDevice = new Set<string>();
  for (const iface of activeView) {
    for (const stanza of Object.values(iface.families)) {
      if (stanza == null) continue;
      for (const slot of FILE_SLOTS)
        if (typeof stanza[slot] === 'string') onDevice.add(`${slot}/${String(stanza[slot])}`);
    }
  }
  const needed = new Set<string>();
  for (const { stanza } of toPost) {
    for (const slot of FILE_SLOTS) {
      const name = stanza.fields[slot];
      if (typeof name === 'string' && !onDevice.has(`${slot}/${name}`)) needed.add(`${slot}/${name}`);
    }
  }
  return desired.files.filter((f) => needed.has(`${f.slot}/${f.filename}`));
}

function sameRule(a: AclRule, b: AclRule): boolean {
  const norm = (r: AclRule) =>
    JSON.stringify([r.protocol, r.from_port, r.to_port, [...r.source_addresses].sort(), [...r.interfaces].sort()]);
  return norm(a) === norm(b);
}
