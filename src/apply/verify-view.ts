import { type DeviceInterface, stanzaKey } from '../admin-api/index.js';
import { compareStanza, type ExpectedStanza, indexStanzas } from '../plan/index.js';

/**
 * Checks a device view against what the plan expects and says, one sentence per stanza, what
 * differs. Secrets are checked by their `_set` markers only: the device never returns them.
 * Settings only: whether a switch port authorized 802.1X is not part of any view (the Admin API
 * has no such state); dot1x-authorization.ts judges it by the addresses the interfaces get.
 * Fields the device adds that the model does not know are not read (configFields keeps them out).
 */
export function verifyView(view: readonly DeviceInterface[], expected: readonly ExpectedStanza[]): string[] {
  const stanzas = indexStanzas(view);
  const problems: string[] = [];
  for (const want of expected) {
    const label = `${want.name} ${want.family}`;
    const have = stanzas.get(stanzaKey(want.name, want.family))?.stanza;
    if (want.stanza === null) {
      if (have != null) problems.push(`${label} is still there`);
      continue;
    }
    if (have == null) {
      problems.push(`${label} is missing`);
      continue;
    }
    const differences = compareStanza(want.stanza, have, () => true).map((c) =>
      c.secret
        ? `${c.field} is ${c.to === undefined ? 'still set' : 'not set'}`
        : `${c.field} is ${show(c.from)}, expected ${show(c.to)}`,
    );
    if (differences.length > 0) problems.push(`${label}: ${differences.join('; ')}`);
  }
  return problems;
}

function show(value: unknown): string {
  if (value === undefined) return '(none)';
  return typeof value === 'string' ? value : JSON.stringify(value);
}
