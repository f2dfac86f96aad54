import { configFields, normaliseFields } from './compare-stanzas.js';
import type { DeviceSnapshot, PlanRefusal, Step } from './plan-types.js';
import { type DesiredStanza, type DeviceInterfaceView, type DeviceStanza, type Family, SECRET_FIELDS, stanzaKey } from './stanza.js';

/**
 * Pending changes already on the device that this run did not make would silently become active
 * at our networking restart. They stop the plan, unless the user asks to discard them: then
 * stanzas the file covers are simply replaced, and the rest are put back to their active state.
 */
export function foreignPendingSteps(
  snapshot: DeviceSnapshot,
  desired: Map<string, DesiredStanza>,
  discard: boolean,
): { steps: Step[]; refusals: PlanRefusal[] } {
  const active = flatten(snapshot.active);
  const pending = flatten(snapshot.pending);
  const foreign: { key: string; name: string; family: Family; active: DeviceStanza | null | undefined; pending: DeviceStanza | null | undefined }[] = [];
  for (const key of new Set([...active.keys(), ...pending.keys()])) {
    const a = active.get(key);
    const p = pending.get(key);
    // A stanza absent from the pending view is unchanged; null there means "about to be removed".
    if (p === undefined) continue;
    const differs = p === null ? a != null : a == null || !sameStanza(a.stanza, p.stanza);
    // Pending exactly what this file asks for is ours, left by an interrupted run: not foreign.
    const wanted = desired.get(key);
    const ours = p != null && wanted !== undefined && comparable(p.stanza) === comparable(wanted.fields);
    if (differs && !ours) {
      const ref = (p ?? a) as { name: string; family: Family };
      foreign.push({ key, name: ref.name, family: ref.family, active: a?.stanza, pending: p?.stanza ?? null });
    }
  }
  if (foreign.length === 0) return { steps: [], refusals: [] };
  const names = foreign.map((f) => `${f.name} ${f.family}`).join(', ');
  if (!discard) {
    return {
      steps: [],
      refusals: [
        {
          reason: 'foreign-pending',
          message:
            `the device has pending changes that mpprov did not make (${names}); they would become active at the next networking restart ` +
            '(review them on the device, or re-run with --discard-pending to drop them)',
        },
      ],
    };
  }
  const steps: Step[] = [];
  const refusals: PlanRefusal[] = [];
  for (const f of foreign) {
    if (desired.has(f.key)) continue; // the file's own stanza replaces it
    if (f.active == null) {
      steps.push({ kind: 'delete-stanza', name: f.name, family: f.family, reason: 'discard a pending stanza mpprov did not make' });
    } else if (SECRET_FIELDS.some((field) => f.active?.[`${field}_set`] === true)) {
      refusals.push({
        reason: 'cannot-restore',
        message: `cannot discard the pending change of ${f.name} ${f.family}: its active stanza holds secrets the device does not return (configure this interface in the file instead)`,
      });
    } else {
      steps.push({ kind: 'restore-stanza', name: f.name, family: f.family, fields: configFields(f.active) as Record<string, never>, reason: 'discard a pending change mpprov did not make' });
    }
  }
  return { steps, refusals };
}

function flatten(view: readonly DeviceInterfaceView[]): Map<string, { name: string; family: Family; stanza: DeviceStanza } | null> {
  const out = new Map<string, { name: string; family: Family; stanza: DeviceStanza } | null>();
  for (const iface of view) {
    for (const family of ['inet', 'inet6'] as const) {
      const stanza = iface.families[family];
      if (stanza === undefined) continue;
      out.set(stanzaKey(iface.name, family), stanza === null ? null : { name: iface.name, family, stanza });
    }
  }
  return out;
}

function sameStanza(a: DeviceStanza, b: DeviceStanza): boolean {
  const setMarkers = (s: DeviceStanza) => SECRET_FIELDS.filter((f) => s[`${f}_set`] === true).join(',');
  return setMarkers(a) === setMarkers(b) && comparable(a) === comparable(b);
}

/** Configuration fields only, normalised, in a stable order. */
function comparable(stanza: Record<string, unknown>): string {
  const fields = normaliseFields(configFields(stanza));
  return JSON.stringify(Object.keys(fields).sort().map((k) => [k, fields[k]]));
}
