import { type DeviceInterface, type Family, type Stanza, stanzaKey } from '../admin-api/index.js';
import { configFields, holdsSecrets, indexStanzas, normaliseFields } from '../plan/index.js';

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
  /** It held write-only values the device never returns: it cannot be put back by us. */
  | { kind: 'unrestorable'; name: string; family: Family };

/**
 * The decisions of a roll-back or a take-back, without the requests: per changed stanza, delete,
 * re-post or give up. Pure, so the choice is tested without a device.
 */
export function restoreActions(before: readonly DeviceInterface[], changed: readonly StanzaRef[]): RestoreAction[] {
  const active = indexStanzas(before);
  return changed.map(({ name, family }): RestoreAction => {
    const old = active.get(stanzaKey(name, family))?.stanza;
    if (old == null) return { kind: 'delete', name, family };
    if (holdsSecrets(old)) return { kind: 'unrestorable', name, family };
    return { kind: 'restore', name, family, fields: configFields(old) };
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
  return JSON.stringify(Object.keys(normal).sort().map((k) => [k, normal[k]]));
}
