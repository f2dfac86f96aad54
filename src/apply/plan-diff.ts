import type { AclRule, Family } from '../admin-api/index.js';
import type { FieldChange, Plan, StanzaChange } from '../plan/index.js';

/**
 * The plan as data, for `plan --json` and `apply --json` (the `diff` and `aclDiff` of the 'plan'
 * event): per stanza that changes, its fields before and after, as a program (the Ansible
 * module's `--diff`) shows them. The shape is a published contract (README, "JSON output"):
 * add fields, never change these.
 *
 * Write-only fields (secrets) never carry a value or a hash, only a mark:
 * - "(changed)" in before and after: the secret is sent and differs from the last one applied
 *   (or no record says it is the same, so it is sent again); in after only when the device held
 *   no value for it (nothing was there before, as on a create);
 * - "(unchanged)" in before and after: sent with the stanza, and equal to what was last applied;
 * - "(set)" in before only: the device reports a value that the run removes (a delete, or 802.1X
 *   taken off an update). The device says only whether a value is set, which is all "(set)" says.
 */

const SecretMark = { Changed: '(changed)', Unchanged: '(unchanged)', Set: '(set)' } as const;
type SecretMark = (typeof SecretMark)[keyof typeof SecretMark];

export interface StanzaDiff {
  /** The interface name: "eth1", "eth1.20", "wlan0". */
  stanza: string;
  family: Family;
  action: 'create' | 'update' | 'delete';
  /**
   * Null for a create. For an update only the fields that differ; a field in `before` and not in
   * `after` is removed, one in `after` and not in `before` is added. For a delete every field.
   */
  before: Record<string, unknown> | null;
  /** Null for a delete; for a create every field the stanza is posted with. */
  after: Record<string, unknown> | null;
}

export interface AclDiff {
  /** The rule as the Admin API takes (add) or reports (remove) it. */
  acl: AclRule;
  action: 'create' | 'delete';
}

/** The stanzas the plan changes (unchanged ones left out), in the plan's order. */
export function stanzaDiff(plan: Plan): StanzaDiff[] {
  const out: StanzaDiff[] = [];
  for (const change of plan.stanzas) {
    if (change.action === 'unchanged') continue;
    out.push({ stanza: change.name, family: change.family, action: change.action, ...sides(change) });
  }
  return out;
}

/** The ACL rules the plan adds and removes (the file's `acl` key; empty without it). */
export function aclDiff(plan: Plan): AclDiff[] {
  const out: AclDiff[] = [];
  for (const step of plan.steps) {
    if (step.kind === 'add-acl-rule') out.push({ acl: step.rule, action: 'create' });
    else if (step.kind === 'remove-acl-rule') out.push({ acl: step.rule, action: 'delete' });
  }
  return out;
}

function sides(change: StanzaChange): Pick<StanzaDiff, 'before' | 'after'> {
  const before: Record<string, unknown> = {};
  const after: Record<string, unknown> = {};
  for (const field of change.changes) {
    const { from, to } = field.secret ? secretMarks(field) : field;
    if (from !== undefined) before[field.field] = from;
    if (to !== undefined) after[field.field] = to;
  }
  // Sent with the stanza but the same as last time: listed, so a reader sees it is sent.
  for (const field of change.unchangedSecrets) {
    before[field] = SecretMark.Unchanged;
    after[field] = SecretMark.Unchanged;
  }
  return {
    before: change.action === 'create' ? null : before,
    after: change.action === 'delete' ? null : after,
  };
}

/**
 * compareStanza's write-only FieldChange says only whether a value was set (`from: 'set'`) and
 * whether one will be sent (`to: 'set'`); never what it is.
 */
function secretMarks(field: FieldChange): { from: SecretMark | undefined; to: SecretMark | undefined } {
  const wasSet = field.from !== undefined;
  if (field.to === undefined) return { from: wasSet ? SecretMark.Set : undefined, to: undefined };
  return { from: wasSet ? SecretMark.Changed : undefined, to: SecretMark.Changed };
}
