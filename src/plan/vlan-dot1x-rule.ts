import { FAMILIES, stanzaKey } from '../admin-api/index.js';
import { type IndexedStanza, indexStanzas } from './index-stanzas.js';
import type { DesiredDevice, DeviceSnapshot, PlanRefusal } from './plan-types.js';

/** The settings of a stanza as the device will hold them after this run: what decides the rule. */
type After = Record<string, unknown>;

/**
 * The vendor's VLAN rule, both ways (docs/device-model.md): a VLAN stanza with 802.1X is allowed only
 * while its parent (vlan_raw_device) is configured dhcp or static with 802.1X. Judged on the device
 * as this run would leave it: the file's stanzas for the interfaces it names, nothing for those
 * prune removes, and the device's next view (pending over active) for the rest. The device would
 * refuse the request that breaks it with a 400 halfway through; this refuses before any change.
 * Both sides in the file is the validator's case (interface-rules.ts); it is judged here too, so
 * a plan never depends on the validator having run.
 */
export function vlanDot1xRefusals(
  desired: DesiredDevice,
  snapshot: DeviceSnapshot,
  discardPending: boolean,
): PlanRefusal[] {
  const after = stateAfter(desired, snapshot, discardPending);
  const managed = new Set(desired.interfaces.map((i) => i.name));
  const refusals: PlanRefusal[] = [];
  for (const [name, stanzas] of after) {
    if (!stanzas.some(hasDot1x)) continue;
    const parent = parentOf(name, stanzas, desired);
    if (parent === undefined) continue;
    const parentStanzas = after.get(parent) ?? [];
    if (parentStanzas.some((s) => (s.method === 'dhcp' || s.method === 'static') && hasDot1x(s))) continue;
    if (managed.has(name)) {
      refusals.push({
        reason: 'device-rule',
        message: `802.1X on VLAN ${name} needs its parent ${parent} on dhcp or static with 802.1X on the device; add ${parent} with its dot1x block to the file`,
      });
    } else if (managed.has(parent)) {
      refusals.push({
        reason: 'device-rule',
        message:
          `VLAN ${name} on the device keeps its 802.1X, which the device allows only while its parent ${parent} is on dhcp or static with 802.1X, ` +
          `and this file leaves ${parent} without it; in the same stick, turn off the 802.1X of ${name} (add ${name} to the file without a dot1x block) ` +
          `or remove ${name} (prune: true removes every interface the file does not name), or keep 802.1X on ${parent}`,
      });
    }
    // Neither in the file: the device's own state, which this run does not change.
  }
  return refusals;
}

function stateAfter(desired: DesiredDevice, snapshot: DeviceSnapshot, discardPending: boolean): Map<string, After[]> {
  const after = new Map<string, After[]>();
  for (const iface of desired.interfaces)
    after.set(
      iface.name,
      iface.stanzas.map((s) => ({ ...s.fields })),
    );
  if (desired.prune) return after;
  const active = indexStanzas(snapshot.active);
  // Discarded pending changes go back to the active settings; otherwise the pending view decides.
  const pending = discardPending ? new Map<string, IndexedStanza>() : indexStanzas(snapshot.pending);
  const names = new Set([...snapshot.active, ...snapshot.pending].map((i) => i.name));
  for (const name of names) {
    if (after.has(name)) continue;
    const stanzas: After[] = [];
    for (const family of FAMILIES) {
      const key = stanzaKey(name, family);
      const next = pending.has(key) ? pending.get(key)?.stanza : active.get(key)?.stanza;
      if (next != null) stanzas.push(next);
    }
    after.set(name, stanzas);
  }
  return after;
}

function parentOf(name: string, stanzas: readonly After[], desired: DesiredDevice): string | undefined {
  const fromFile = desired.interfaces.find((i) => i.name === name)?.vlanParent;
  if (fromFile !== undefined) return fromFile;
  const raw = stanzas.map((s) => s.vlan_raw_device).find((v): v is string => typeof v === 'string');
  if (raw !== undefined) return raw;
  const dot = name.indexOf('.');
  return dot > 0 ? name.slice(0, dot) : undefined;
}

function hasDot1x(stanza: After): boolean {
  return typeof stanza.wpa_key_mgmt === 'string';
}
