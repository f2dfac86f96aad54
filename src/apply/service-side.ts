import type { AgentServiceSettings } from '../config/index.js';
import {
  createDataApiClient,
  createServiceWatch,
  type DataApi,
  type RateLimiter,
  serviceTarget,
  type ServiceWatch,
} from '../service/index.js';

/**
 * The service side of a run, or of the agent across its jobs: one client (so one rate limit for
 * the token) and one watch (so every MP waiting joins the same rounds, and a path is created once).
 */
export interface ServiceSide {
  client: DataApi;
  watch: ServiceWatch;
}

export interface ServiceSideOptions {
  /** Share the limit with other clients of the same token (the daemon keeps one across reloads). */
  limiter?: RateLimiter | undefined;
  /** Round spacing, for tests and the demo; default the watch's (2 s). */
  roundMs?: number | undefined;
}

export function createServiceSide(settings: AgentServiceSettings, options: ServiceSideOptions = {}): ServiceSide {
  const client = createDataApiClient(
    serviceTarget(settings),
    options.limiter === undefined ? {} : { limiter: options.limiter },
  );
  const watch = createServiceWatch(client, {
    orgId: settings.orgId,
    ...(options.roundMs === undefined ? {} : { timing: { roundMs: options.roundMs } }),
  });
  return { client, watch };
}

/** True when two service blocks reach the same service as the same caller, so one side serves both. */
export function sameService(a: AgentServiceSettings, b: AgentServiceSettings): boolean {
  return (
    a.url === b.url &&
    a.caPem === b.caPem &&
    a.orgId === b.orgId &&
    a.token.satisfies((mine) => b.token.satisfies((theirs) => mine === theirs))
  );
}
