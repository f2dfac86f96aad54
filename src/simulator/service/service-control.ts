import type { IncomingMessage, ServerResponse } from 'node:http';
import { FaultSyntaxError } from '../faults.js';
import { BodyTooLarge, KiB, parseJsonBody, readBody, sendJson } from '../http-exchange.js';

/**
 * The simulated service's part of the control port (TEST-ONLY, plain HTTP on loopback), for a CLI
 * run (`mpprov simulate --service`):
 *
 *   GET    /_sim/service/requests      the data API's request log and counts per kind   DELETE clears
 *   GET    /_sim/service/deliveries    every event delivery with its outcome, and counts  DELETE clears
 *   GET    /_sim/service/observers     every caller's observer configurations
 *   GET    /_sim/service/event-faults  the delivery faults       DELETE clears them
 *   POST   /_sim/service/event-faults  {"faults": ["drop,times=2", "delay=500", "duplicate", "reorder"]}  replaces them
 */

/** What the control port reads and changes of the service (the service stays its own module). */
export interface ServiceControlSource {
  requests(): unknown[];
  requestCounts(): Record<string, number | undefined>;
  clearRequests(): void;
  deliveries(): unknown[];
  deliveryCounts(): Record<string, number | undefined>;
  clearDeliveries(): void;
  observers(): unknown[];
  setDeliveryFaults(specs: readonly string[]): void;
  deliveryFaults(): unknown[];
  clearDeliveryFaults(): void;
}

const BODY_LIMIT = 64 * KiB;

/** Answers `/_sim/service/...`; false when the request is for another control endpoint. */
export function serveServiceControl(
  service: ServiceControlSource | undefined,
  req: IncomingMessage,
  res: ServerResponse,
): boolean {
  const path = new URL(req.url ?? '/', 'http://control').pathname;
  if (!path.startsWith('/_sim/service/')) return false;
  if (service === undefined) {
    sendJson(res, 404, { success: false, error: 'No simulated service runs here (start it with --service).' });
    return true;
  }
  void answer(service, path, req, res).catch((error: unknown) => {
    if (error instanceof BodyTooLarge)
      sendJson(res, 413, { success: false, error: 'Request body is too large.' }, { connection: 'close' });
    else if (!res.headersSent) sendJson(res, 500, { success: false, error: String(error) });
  });
  return true;
}

async function answer(
  service: ServiceControlSource,
  path: string,
  req: IncomingMessage,
  res: ServerResponse,
): Promise<void> {
  switch (`${req.method} ${path}`) {
    case 'GET /_sim/service/requests':
      return sendJson(res, 200, { success: true, counts: service.requestCounts(), requests: service.requests() });
    case 'DELETE /_sim/service/requests':
      service.clearRequests();
      return sendJson(res, 200, { success: true });
    case 'GET /_sim/service/deliveries':
      return sendJson(res, 200, { success: true, counts: service.deliveryCounts(), deliveries: service.deliveries() });
    case 'DELETE /_sim/service/deliveries':
      service.clearDeliveries();
      return sendJson(res, 200, { success: true });
    case 'GET /_sim/service/observers':
      return sendJson(res, 200, { success: true, observers: service.observers() });
    case 'GET /_sim/service/event-faults':
      return sendJson(res, 200, { success: true, faults: service.deliveryFaults() });
    case 'DELETE /_sim/service/event-faults':
      service.clearDeliveryFaults();
      return sendJson(res, 200, { success: true });
    case 'POST /_sim/service/event-faults':
      return setFaults(service, await readBody(req, BODY_LIMIT), res);
  }
  const known = ['requests', 'deliveries', 'observers', 'event-faults'].some(
    (name) => path === `/_sim/service/${name}`,
  );
  if (known) sendJson(res, 405, { success: false, error: `Method ${req.method} is not allowed on ${path}.` });
  else sendJson(res, 404, { success: false, error: `No such control endpoint: ${req.method} ${path}.` });
}

function setFaults(service: ServiceControlSource, body: Buffer, res: ServerResponse): void {
  const parsed = parseJsonBody(body);
  const faults = parsed.ok ? (parsed.value as { faults?: unknown } | undefined)?.faults : undefined;
  if (!Array.isArray(faults) || !faults.every((f) => typeof f === 'string')) {
    sendJson(res, 400, {
      success: false,
      error: 'Body must be {"faults": [...]} with fault strings such as "drop,times=2" or "delay=500".',
    });
    return;
  }
  try {
    service.setDeliveryFaults(faults);
  } catch (error) {
    if (!(error instanceof FaultSyntaxError)) throw error;
    sendJson(res, 400, { success: false, error: error.message });
    return;
  }
  sendJson(res, 200, { success: true, faults: service.deliveryFaults() });
}
