import { createServiceSide, sameService, type ServiceSide } from '../apply/service-side.js';
import type { AgentServiceSettings } from '../config/index.js';
import { RateLimiter } from '../service/index.js';

/**
 * The agent's service side across its jobs: one rate limit for the token (the service counts per
 * caller, not per job) and one watch, so MPs of parallel jobs join the same rounds and a path two
 * jobs name is created once. A SIGHUP that changes the service block starts a new side for the
 * jobs that start after it; the jobs still running keep theirs, so a retired side's client is
 * closed only when the agent stops. The limiter stays the same for both: same token or not, the
 * agent never spends more than the limit a caller is given.
 */
export interface AgentServiceSides {
  /** The side for a job started with these settings; undefined without a service block. */
  sideFor(settings: AgentServiceSettings | undefined): ServiceSide | undefined;
  close(): Promise<void>;
}

/** `stateDir`: where `mpprov observe` on this host writes events.jsonl (used with service.events). */
export function createAgentServiceSides(stateDir?: string): AgentServiceSides {
  const limiter = new RateLimiter();
  let current: { settings: AgentServiceSettings; side: ServiceSide } | undefined;
  const retired: ServiceSide[] = [];
  return {
    sideFor(settings) {
      if (settings === undefined) return undefined;
      if (current !== undefined && sameService(current.settings, settings)) return current.side;
      if (current !== undefined) retired.push(current.side);
      current = { settings, side: createServiceSide(settings, { limiter, stateDir }) };
      return current.side;
    },
    async close() {
      const sides = [...retired, ...(current === undefined ? [] : [current.side])];
      for (const side of sides) side.stopEvents();
      await Promise.allSettled(sides.map((side) => side.client.close()));
    },
  };
}
