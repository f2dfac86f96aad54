import { INTERFACE_LEVEL_FIELDS, type Stanza, type StanzaField } from './stanza.js';

/**
 * docs/device-model.md: "The stanza posted last sets [the interface-level fields] for the whole
 * interface: the device copies them into the interface's other pending stanza (a field the posted
 * stanza leaves out is removed there too)". `sibling` is the other family's stanza as the pending
 * view shows it; the answer is that stanza with the posted stanza's interface-level fields, its
 * own per-family fields (method, addresses, routes, ...) untouched. Write-only values are copied
 * as they are: the device keeps them, and each view shows them as `<field>_set`.
 */
export function withInterfaceLevelFieldsOf(posted: Stanza, sibling: Stanza): Stanza {
  const copy: Stanza = { ...sibling };
  for (const field of INTERFACE_LEVEL_FIELDS) {
    delete copy[field];
    copyField(posted, copy, field);
  }
  return copy;
}

function copyField<F extends StanzaField>(from: Stanza, to: Stanza, field: F): void {
  const value = from[field];
  if (value !== undefined) to[field] = structuredClone(value);
}
