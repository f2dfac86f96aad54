import { type Family, setMarker, type Stanza, WRITE_ONLY_FIELDS } from '../admin-api/index.js';
import { configFields, holdsSecrets, normaliseFields } from './compare-stanzas.js';
import { indexStanzas } from './index-stanzas.js';
import type { DesiredStanza, DeviceSnapshot, PlanRefusal, Step } from './plan-types.js';

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
  const active = indexStanzas(snapshot.active);
  const pending = indexStanzas(snapshot.pending);
  const foreign: {
    key: string;
    name: string;
    family: Family;
    active: Stanza | null | undefined;
    pending: Stanza | null;
  }[] = [];
  for (const key of new Set([...active.keys(), ...pending.keys()])) {
    const a = active.get(key)?.stanza;
    const p = pending.get(key);
    // A stanza absent from the pending view is unchanged; null there means "about to be removed".
    if (p === undefined) continue;
    const differs = p.stanza === null ? a != null : a == null || !sameStanza(a, p.stanza);
    // Pending exactly what this file asks for is ours, left by an interrupted run: not foreign.
    const wanted = desired.get(key);
    const ours = p.stanza !== null && wanted !== undefined && comparable(p.stanza) === comparable(wanted.fields);
    if (differs && !ours) foreign.push({ key, name: p.name, family: p.family, active: a, pending: p.stanza });
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
      steps.push({
        kind: 'delete-stanza',
        name: f.name,
        family: f.family,
        reason: 'discard a pending stanza mpprov did not make',
      });
    } else if (holdsSecrets(f.active)) {
      refusals.push({
        reason: 'cannot-restore',
        message: `cannot discard the pending change of ${f.name} ${f.family}: its active stanza holds secrets the device does not return (configure this interface in the file instead)`,
      });
    } else {
      steps.push({
        kind: 'restore-stanza',
        name: f.name,
        family: f.family,
        fields: configFields(f.active),
        reason: 'discard a pending change mpprov did not make',
      });
    }
  }
  return { steps, refusals };
}

function sameStanza(a: Stanza, b: Stanza): boolean {
  const setMarkers = (s: Stanza) => WRITE_ONLY_FIELDS.filter((f) => s[setMarker(f)] === true).join(',');
  return setMarkers(a) === setMarkers(b) && comparable(a) === comparable(b);
}

/** Configuration fields only, normalised, in a stable order. */
function comparable(stanza: Stanza): string {
  const fields = normaliseFields(configFields(stanza));
  return JSON.stringify(
    Object.keys(fields)
      .sort()
      .map((k) => [k, fields[k]]),
  );
}
