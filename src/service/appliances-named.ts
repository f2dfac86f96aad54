import { matchingAppliances } from './appliance-match.js';
import type { DataApi } from './data-api-client.js';
import type { Appliance } from './data-api-model.js';
import { failureStatus } from './failure-kind.js';

/**
 * Every record of the MP `hostname` (appliance-match.ts), asked by hostname; a service that
 * refuses that query (400) is listed whole, of `orgId` when known (`service.org_id`), and the
 * MP matched here. For one-off lookups; a watch keeps what it learnt instead (plan-paths.ts).
 */
export async function appliancesNamed(
  client: DataApi,
  hostname: string,
  orgId: number | undefined,
): Promise<Appliance[]> {
  try {
    return matchingAppliances(await client.listAppliances({ hostname }), hostname);
  } catch (error) {
    if (failureStatus(error) !== 400) throw error;
  }
  return matchingAppliances(await client.listAppliances(orgId === undefined ? {} : { orgId }), hostname);
}
