import {
  type DeviceInterface,
  type Family,
  setMarker,
  type Stanza,
  stanzaKey,
  WRITE_ONLY_FIELDS,
  type WriteOnlyField,
} from '../admin-api/index.js';
import { configFields, indexStanzas, normaliseFields, vlanRuleOrder } from '../plan/index.js';

export interface StanzaRef {
  name: string;
  family: Family;
}

/** How to put one stanza back as the snapshot's active view showed it before the run. */
export type RestoreAction =
  /** It did not exist before: remove it. */
  | { kind: 'delete'; name: string; family: Family }
  /** Re-post its settings as they were (unknown fields of the device kept). */
  | { kind: 'restore'; name: string; family: Family; fields: Stanza }
  /** It held write-only values the device never returns (`secrets`): it cannot be put back by us. */
  | { kind: 'unrestorable'; name: string; family: Family; secrets: WriteOnlyField[] };

/**
 * The decisions of a roll-back or a take-back, without the requests: per changed stanza, delete,
 * re-post or give up. Pure, so the choice is tested without a device.
 */
export function restoreActions(before: readonly DeviceInterface[], changed: readonly StanzaRef[]): RestoreAction[] {
  const active = indexStanzas(before);
  return changed.map(({ name, family }): RestoreAction => {
    const old = active.get(stanzaKey(name, family))?.stanza;
    if (old == null) return { kind: 'delete', name, family };
    const secrets = WRITE_ONLY_FIELDS.filter((field) => old[setMarker(field)] === true);
    if (secrets.length > 0) return { kind: 'unrestorable', name, family, secrets };
    return { kind: 'restore', name, family, fields: configFields(old) };
  });
}

/**
 * The requests of `actions` in the order the device's VLAN rule allows (vlan-order.ts): a VLAN
 * losing its 802.1X or going away before its parent loses 802.1X, a parent regaining it before
 * its VLAN does. Unrestorable stanzas send nothing and are left out.
 */
export function restoreOrder(actions: readonly RestoreAction[]): Exclude<RestoreAction, { kind: 'unrestorable' }>[] {
  const requests = actions.filter(
    (a): a is Exclude<RestoreAction, { kind: 'unrestorable' }> => a.kind !== 'unrestorable',
  );
  return vlanRuleOrder(requests, (a) => {
    if (a.kind === 'delete') return { name: a.name, kind: 'delete', withDot1x: false, turnsDot1xOff: false };
    const withDot1x = typeof a.fields.wpa_key_mgmt === 'string';
    // Without the current view: a VLAN put back without 802.1X is treated as losing it (the safe side).
    return { name: a.name, kind: 'post', withDot1x, turnsDot1xOff: !withDot1x };
  });
}

/** The stanzas `view` does not show as the actions put them ("eth1 inet"); unrestorable ones are not checked. */
export function notRestored(view: readonly DeviceInterface[], actions: readonly RestoreAction[]): string[] {
  const now = indexStanzas(view);
  return actions
    .filter((action) => {
      const stanza = now.get(stanzaKey(action.name, action.family))?.stanza;
      if (action.kind === 'delete') return stanza != null;
      if (action.kind === 'restore') return stanza == null || comparable(stanza) !== comparable(action.fields);
      return false;
    })
    .map((action) => stanzaKey(action.name, action.family));
}

function comparable(stanza: Stanza): string {
  const normal = normaliseFields(configFields(stanza));
  return JSON.stringify(
    Object.keys(normal)
      .sort()
      .map((k) => [k, normal[k]]),
  );
}
