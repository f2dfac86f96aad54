import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import { FaultSyntaxError } from './faults.js';
import { BodyTooLarge, KiB, parseJsonBody, readBody, sendJson } from './http-exchange.js';
import { serveServiceControl, type ServiceControlSource } from './service/service-control.js';
import type { SimulatedDevice } from './simulated-device.js';

/**
 * The control port: TEST-ONLY, unauthenticated, plain HTTP, always on loopback. Tests and
 * rehearsals read a device's whole state and request log, inject faults and reset it, even while
 * the device itself is in an outage or locked out.
 *
 *   GET    /_sim/state                 state of the device (fleet: a summary of every device)
 *   GET    /_sim/requests              request log          DELETE /_sim/requests  clears it
 *   POST   /_sim/faults   {"faults": ["error=1,times=1@POST /api/v1/interface/", ...]}  replaces the faults
 *   POST   /_sim/reset    {"keep_config": false, "keep_faults": false}   clears lockout and outage
 *   ...    /_sim/devices/{n}/state|requests|faults|reset   the same for device n (fleet: every device)
 *   ...    /_sim/service/...           with --service: the service's request log, event deliveries,
 *                                      observers and delivery faults (service/service-control.ts)
 * In fleet mode the commands without /devices/{n} apply to every device.
 */

const BODY_LIMIT = 256 * KiB;

export interface ControlServer {
  url: string;
  /** Control base of device n: `${url}/_sim/devices/${n}`, or `${url}/_sim` for a single device. */
  deviceBase(index: number): string;
  close(): Promise<void>;
}

/** The simulated monitoring service, as the control port reads and changes it (service/service-control.ts). */
export type ServiceRequestSource = ServiceControlSource;

export async function startControlServer(
  devices: readonly SimulatedDevice[],
  options: { host: string; port: number; service?: ServiceRequestSource | undefined },
): Promise<ControlServer> {
  const server: Server = createServer((req, res) => {
    const served = serveServiceControl(options.service, req, res);
    if (served) return;
    void handle(devices, req, res).catch((error: unknown) => {
      if (error instanceof BodyTooLarge)
        sendJson(res, 413, { success: false, error: 'Request body is too large.' }, { connection: 'close' });
      else if (!res.headersSent) sendJson(res, 500, { success: false, error: String(error) });
    });
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen({ host: options.host, port: options.port }, () => {
      server.removeListener('error', reject);
      resolve();
    });
  });
  const port = (server.address() as { port: number }).port;
  const host = options.host.includes(':') ? `[${options.host}]` : options.host;
  const url = `http://${host}:${port}`;
  return {
    url,
    deviceBase: (index) => (devices.length === 1 ? `${url}/_sim` : `${url}/_sim/devices/${index}`),
    close: () =>
      new Promise<void>((resolve) => {
        server.close(() => resolve());
        server.closeAllConnections();
      }),
  };
}

async function handle(devices: readonly SimulatedDevice[], req: IncomingMessage, res: ServerResponse): Promise<void> {
  const url = new URL(req.url ?? '/', 'http://control');
  const match = /^\/_sim(?:\/devices\/(\d+))?\/(state|requests|faults|reset)$/.exec(url.pathname);
  if (match === null) {
    sendJson(res, 404, { success: false, error: `No such control endpoint: ${req.method} ${url.pathname}.` });
    return;
  }
  const [, indexText, action] = match;
  let targets: readonly SimulatedDevice[] = devices;
  if (indexText !== undefined) {
    const device = devices[Number(indexText)];
    if (device === undefined) {
      sendJson(res, 404, { success: false, error: `No device ${indexText}; devices are 0 to ${devices.length - 1}.` });
      return;
    }
    targets = [device];
  }
  const single = targets.length === 1 ? targets[0] : undefined;
  const key = `${req.method} ${action}`;
  switch (key) {
    case 'GET state':
      sendJson(
        res,
        200,
        single !== undefined
          ? { success: true, state: single.state() }
          : { success: true, devices: targets.map(summary) },
      );
      return;
    case 'GET requests':
      sendJson(
        res,
        200,
        single !== undefined
          ? { success: true, requests: single.log.list() }
          : { success: true, devices: targets.map((d) => ({ index: d.settings.index, requests: d.log.list() })) },
      );
      return;
    case 'DELETE requests':
      for (const device of targets) device.log.clear();
      sendJson(res, 200, { success: true });
      return;
    case 'POST faults': {
      const body = parseJsonBody(await readBody(req, BODY_LIMIT));
      const faults = body.ok ? (body.value as { faults?: unknown } | undefined)?.faults : undefined;
      if (
        !Array.isArray(faults) ||
        !faults.every((f) => typeof f === 'string' || (typeof f === 'object' && f !== null))
      ) {
        sendJson(res, 400, {
          success: false,
          error: 'Body must be {"faults": [...]} with fault strings such as "error=1,times=1@POST /api/v1/interface/".',
        });
        return;
      }
      try {
        for (const device of targets) device.faults.set(faults as string[]);
      } catch (error) {
        if (!(error instanceof FaultSyntaxError)) throw error;
        sendJson(res, 400, { success: false, error: error.message });
        return;
      }
      sendJson(res, 200, { success: true, faults: targets[0]?.faults.list() ?? [] });
      return;
    }
    case 'POST reset': {
      const body = parseJsonBody(await readBody(req, BODY_LIMIT));
      const options =
        body.ok && typeof body.value === 'object' && body.value !== null ? (body.value as Record<string, unknown>) : {};
      for (const device of targets) {
        await device.reset({
          keepConfig: options['keep_config'] === true,
          keepFaults: options['keep_faults'] === true,
        });
      }
      sendJson(res, 200, { success: true });
      return;
    }
    default:
      sendJson(res, 405, { success: false, error: `Method ${req.method} is not allowed on ${url.pathname}.` });
  }
}

function summary(device: SimulatedDevice): Record<string, unknown> {
  return {
    index: device.settings.index,
    url: device.url,
    phase: device.phase,
    fingerprint_sha256: device.tls.fingerprintSha256,
  };
}
