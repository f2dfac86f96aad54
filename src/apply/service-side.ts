import type { AgentServiceSettings } from '../config/index.js';
import { watchWithEvents } from '../observe/index.js';
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
  /** Stops following events.jsonl (a no-op without service.events). */
  stopEvents: () => void;
}

export interface ServiceSideOptions {
  /** Share the limit with other clients of the same token (the daemon keeps one across reloads). */
  limiter?: RateLimiter | undefined;
  /** Round spacing, for tests and the demo; default the watch's (2 s), 10 s with service.events. */
  roundMs?: number | undefined;
  /** With service.events: the state folder whose events.jsonl `mpprov observe` writes. */
  stateDir?: string | undefined;
}

/** With events, polling is the fallback: a round every 10 s asks for MPs whose event did not come. */
export const EVENTS_ROUND_MS = 10_000;

export function createServiceSide(settings: AgentServiceSettings, options: ServiceSideOptions = {}): ServiceSide {
  const client = createDataApiClient(
    serviceTarget(settings),
    options.limiter === undefined ? {} : { limiter: options.limiter },
  );
  const events = settings.events !== undefined && options.stateDir !== undefined ? options.stateDir : undefined;
  const roundMs = options.roundMs ?? (events === undefined ? undefined : EVENTS_ROUND_MS);
  const polling = createServiceWatch(client, {
    orgId: settings.orgId,
    ...(roundMs === undefined ? {} : { timing: { roundMs } }),
  });
  if (events === undefined) return { client, watch: polling, stopEvents: () => undefined };
  const following = watchWithEvents(events, polling);
  return { client, watch: following.watch, stopEvents: () => following.stop() };
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
