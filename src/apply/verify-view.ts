import { type DeviceInterface, stanzaKey } from '../admin-api/index.js';
import { compareStanza, type DesiredStanza, type ExpectedStanza, indexStanzas } from '../plan/index.js';

/**
 * Checks a device view against what the plan expects and says, one sentence per stanza, what
 * differs. Secrets are checked by their `_set` markers only: the device never returns them.
 */
export function verifyView(view: readonly DeviceInterface[], expected: readonly ExpectedStanza[], options: { dot1x: boolean }): string[] {
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
      c.secret ? `${c.field} is ${c.to === undefined ? 'still set' : 'not set'}` : `${c.field} is ${show(c.from)}, expected ${show(c.to)}`,
    );
    if (differences.length > 0) problems.push(`${label}: ${differences.join('; ')}`);
    // The device reports the 802.1X outcome per stanza or per interface; either counts.
    const dot1xState = have.dot1x_state ?? view.find((i) => i.name === want.name)?.extra.dot1x_state;
    if (options.dot1x && hasDot1x(want.stanza) && typeof dot1xState === 'string' && dot1xState !== 'authorized') {
      problems.push(`${label}: 802.1X is ${dot1xState} (the switch port did not accept the credentials)`);
    }
  }
  return problems;
}

function hasDot1x(stanza: DesiredStanza): boolean {
  return typeof stanza.fields.wpa_key_mgmt === 'string';
}

function show(value: unknown): string {
  if (value === undefined) return '(none)';
  return typeof value === 'string' ? value : JSON.stringify(value);
}

