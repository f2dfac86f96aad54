import { z } from 'zod';

/**
 * A field of the documented type, else absent. The service counts every event not answered 2xx
 * and blacklists the receiver after ten: an `orgId` sent as text or a `description: null` from a
 * service version the model did not foresee must not cost the registration. Such an event is
 * taken (204) and kept as it came; mpprov reads the field as missing.
 */
const tolerant = <T extends z.ZodType>(schema: T) => schema.optional().catch(undefined);

/**
 * An event the service posts (docs/service-model.md, "Observers and events"). Checked loosely: the
 * kind must be text, the fields mpprov reads are typed (a wrong type reads as missing), unknown
 * kinds and fields are kept as they came. An event carries no signature, so it is a hint that a
 * GET confirms, never proof.
 */
export const ServiceEvent = z.looseObject({
  type: z.string().min(1).max(100),
  description: tolerant(z.string()),
  eventTime: tolerant(z.number()),
  sequencerName: tolerant(z.string()),
  sequencerHost: tolerant(z.string()),
  sequencerStatus: tolerant(z.string()),
  orgId: tolerant(z.number()),
  orgName: tolerant(z.string()),
});
export type ServiceEvent = z.infer<typeof ServiceEvent>;

/** An event is a few hundred bytes; anything far larger is not one. */
export const MAX_EVENT_BYTES = 64 * 1024;

/**
 * The body as an event, or undefined for anything that is not a plausible one (answered 4xx):
 * `event` as mpprov reads it, `received` the object as it came, which events.jsonl keeps (zod's
 * copy puts the schema's keys first and drops a field of the wrong type).
 */
export function parseServiceEvent(
  body: Buffer,
): { event: ServiceEvent; received: Record<string, unknown> } | undefined {
  let json: unknown;
  try {
    json = JSON.parse(body.toString('utf8')) as unknown;
  } catch {
    return undefined;
  }
  if (deeperThan(json, MAX_EVENT_DEPTH)) return undefined;
  const parsed = ServiceEvent.safeParse(json);
  return parsed.success ? { event: parsed.data, received: json as Record<string, unknown> } : undefined;
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
