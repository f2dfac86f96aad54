import type { ConfigState, DeviceConfig } from './device-config.js';
import type { NetworkStatus } from './network-status.js';
import { isWriteOnlyField, stanzaKey, type Family, type Stanza } from './stanza.js';

/**
 * The `families` shape of GET /interface/ (docs/device-model.md): per family the stanza without
 * name and family, write-only fields replaced by `<field>_set: true`; in the active view each
 * stanza also carries `in_use`. Exactly the model's view, unless asked for a rehearsal aid.
 */

export interface ViewOptions {
  /**
   * Adds the interface's `dot1x_state` (authorized, unauthorized, disabled) beside `families` in
   * the active view. Not in the model (the Admin API has no authorization state), so off by
   * default: a client tested against the default view cannot come to depend on it.
   */
  showDot1xState: boolean;
}

function redactStanza(stanza: Stanza): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const [field, value] of Object.entries(stanza)) {
    if (field === 'name' || field === 'family' || value === undefined) continue;
    if (isWriteOnlyField(field)) out[`${field}_set`] = true;
    else out[field] = structuredClone(value);
  }
  return out;
}

export function renderInterface(
  config: DeviceConfig,
  network: NetworkStatus,
  name: string,
  state: ConfigState,
  options: ViewOptions,
): Record<string, unknown> | undefined {
  const stanzas = config.stanzasOf(name, state);
  const entries = Object.entries(stanzas) as [Family, Stanza | null][];
  if (entries.length === 0) return undefined;
  const families: Record<string, unknown> = {};
  for (const [family, stanza] of entries) {
    if (stanza === null) {
      families[family] = null;
      continue;
    }
    const view = redactStanza(stanza);
    if (state === 'active') {
      const inUse = network.inUse.get(stanzaKey(name, family));
      if (inUse !== undefined) view['in_use'] = { ...inUse };
    }
    families[family] = view;
  }
  const out: Record<string, unknown> = { name, config_state: state, families };
  if (state === 'active' && options.showDot1xState)
    out['dot1x_state'] = network.interfaces.get(name)?.dot1xState ?? 'disabled';
  return out;
}

export function renderInterfaces(
  config: DeviceConfig,
  network: NetworkStatus,
  state: ConfigState,
  options: ViewOptions,
): Record<string, unknown>[] {
  return config
    .interfaceNames(state)
    .map((name) => renderInterface(config, network, name, state, options))
    .filter((v): v is Record<string, unknown> => v !== undefined);
}
