import { type DeviceInterface, FAMILIES, type Family, type Stanza, stanzaKey } from '../admin-api/index.js';

export interface IndexedStanza {
  name: string;
  family: Family;
  /** `null`: in a pending view, a stanza about to be removed. */
  stanza: Stanza | null;
}

/** Every stanza of a view by its key ("eth1 inet"); a family the view does not show is absent. */
export function indexStanzas(view: readonly DeviceInterface[]): Map<string, IndexedStanza> {
  const out = new Map<string, IndexedStanza>();
  for (const iface of view) {
    for (const family of FAMILIES) {
      const stanza = iface.families[family];
      if (stanza === undefined) continue;
      out.set(stanzaKey(iface.name, family), { name: iface.name, family, stanza });
    }
  }
  return out;
}
