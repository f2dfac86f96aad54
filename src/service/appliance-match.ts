import type { Appliance } from './data-api-model.js';

/**
 * The MP among a list's entries (docs/service-model.md, "Monitoring Points"): the entries whose
 * `hostname` equals the wanted name, any case (DNS); when none has that hostname (a vendor-true
 * record carries no hostname at all), those whose `name` does. An entry of another name (a
 * service that searches loosely) does not count. Listed more than once (two organizations): an
 * AVAILABLE one wins.
 */
export function pickAppliance(listed: readonly Appliance[], hostname: string): Appliance | undefined {
  const same = matchingAppliances(listed, hostname);
  return same.find((entry) => entry.connectionStatus === 'AVAILABLE') ?? same[0];
}

export function matchingAppliances(listed: readonly Appliance[], hostname: string): Appliance[] {
  const wanted = hostname.toLowerCase();
  const byHostname = listed.filter((entry) => entry.hostname?.toLowerCase() === wanted);
  return byHostname.length > 0 ? byHostname : listed.filter((entry) => entry.name.toLowerCase() === wanted);
}

/** Whether `entry` is the MP `hostname` (an answer to GET /v3/appliance/{id} is checked too: ids can be reused). */
export function isAppliance(entry: Appliance, hostname: string): boolean {
  return matchingAppliances([entry], hostname).length === 1;
}
