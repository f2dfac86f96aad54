import { z } from 'zod';

/**
 * An event the service posts (docs/service-model.md, "Observers and events"). Checked loosely: the
 * kind and the fields the wait uses are typed, unknown kinds and fields are kept as they came. An
 * event carries no signature, so it is a hint that a GET confirms, never proof.
 */
export const ServiceEvent = z.looseObject({
  type: z.string().min(1).max(100),
  description: z.string().optional(),
  eventTime: z.number().optional(),
  sequencerName: z.string().optional(),
  sequencerHost: z.string().optional(),
  sequencerStatus: z.string().optional(),
  orgId: z.number().optional(),
  orgName: z.string().optional(),
});
export type ServiceEvent = z.infer<typeof ServiceEvent>;

/** An event is a few hundred bytes; anything far larger is not one. */
export const MAX_EVENT_BYTES = 64 * 1024;

/** The body as an event, or undefined for anything that is not a plausible one (answered 4xx). */
export function parseServiceEvent(body: Buffer): ServiceEvent | undefined {
  let json: unknown;
  try {
    json = JSON.parse(body.toString('utf8')) as unknown;
  } catch {
    return undefined;
  }
  if (deeperThan(json, MAX_EVENT_DEPTH)) return undefined;
  // The object as it came, not zod's copy (which puts the schema's keys first): events.jsonl keeps
  // each event as received. The schema transforms nothing, so the two hold the same values.
  return ServiceEvent.safeParse(json).success ? (json as ServiceEvent) : undefined;
}

/** The MP names a SEQUENCER_EVENT AVAILABLE carries (host and name); none for any other event. */
export function availableNames(event: ServiceEvent): string[] {
  if (event.type !== 'SEQUENCER_EVENT' || event.sequencerStatus !== 'AVAILABLE') return [];
  return [event.sequencerHost, event.sequencerName].filter((n): n is string => n !== undefined && n !== '');
}

/**
 * An event is a flat object with a few small values. 64 KiB of brackets parses, but writing it back
 * (JSON.stringify recurses) overflows the stack: such a body is not an event.
 */
export const MAX_EVENT_DEPTH = 16;

function deeperThan(value: unknown, limit: number): boolean {
  if (typeof value !== 'object' || value === null) return false;
  if (limit === 0) return true;
  return Object.values(value).some((v) => deeperThan(v, limit - 1));
}
