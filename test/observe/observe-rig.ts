import { mkdtemp, readdir, readFile, rm } from 'node:fs/promises';
import { createServer, Socket as NetSocket, type AddressInfo, type Server, type Socket } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Secret } from '../../src/core/secret.js';
import { runObserve, type ObserveOptions } from '../../src/observe/index.js';
import { createDataApiClient, type DataApi } from '../../src/service/index.js';
import { RIG_TOKEN, type ServiceRig } from '../simulator/service-rig.js';

/**
 * `runObserve` against the simulated service over real HTTPS on loopback, its receiver on a real
 * port, the service's deliveries going through a TCP relay a test can cut (so the service sees
 * unanswered events while the receiver keeps running).
 */

export interface ObserveRun {
  stateDir: string;
  said: string[];
  loud: string[];
  /** Resolves with runObserve's exit status. */
  done: Promise<number>;
  stop(): Promise<number>;
}

export async function freePort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  await new Promise<void>((resolve) => server.close(() => resolve()));
  return port;
}

export function productApi(rig: ServiceRig): DataApi {
  return createDataApiClient({
    url: rig.service.url,
    credentials: { kind: 'token', token: new Secret(RIG_TOKEN) },
    caPem: rig.service.caPem,
  });
}

export async function startObserve(
  rig: ServiceRig,
  options: {
    stateDir?: string;
    listenPort: number;
    publicPort: number;
    checkS?: number;
  } & Partial<Pick<ObserveOptions, 'once' | 'unregister' | 'takeOver'>>,
): Promise<ObserveRun> {
  const stateDir = options.stateDir ?? (await mkdtemp(join(tmpdir(), 'mpprov-observe-')));
  const said: string[] = [];
  const loud: string[] = [];
  const api = productApi(rig);
  const stop = new AbortController();
  const done = runObserve({
    api,
    stateDir,
    events: {
      listen: { host: '127.0.0.1', port: options.listenPort, text: `127.0.0.1:${options.listenPort}`, loopback: true },
      publicUrl: `http://127.0.0.1:${options.publicPort}/mpprov-events/`,
      checkS: options.checkS ?? 1,
    },
    once: options.once,
    unregister: options.unregister,
    takeOver: options.takeOver,
    say: (s) => said.push(s),
    loud: (s) => loud.push(s),
    signal: stop.signal,
    retryPauseMs: 50,
  }).finally(() => api.close());
  return {
    stateDir,
    said,
    loud,
    done,
    stop: () => {
      stop.abort();
      return done;
    },
  };
}

/** A TCP relay from `port` to `target`; `cut()` closes it (connections refused), `mend()` listens again. */
export async function startRelay(
  target: number,
): Promise<{ port: number; cut(): Promise<void>; mend(): Promise<void> }> {
  let server: Server | undefined;
  const sockets = new Set<Socket>();
  let port = 0;
  const listen = async (): Promise<void> => {
    server = createServer((socket) => {
      sockets.add(socket);
      const upstream = new NetSocket();
      upstream.connect(target, '127.0.0.1');
      socket.pipe(upstream).pipe(socket);
      socket.on('error', () => upstream.destroy());
      upstream.on('error', () => socket.destroy());
      socket.on('close', () => sockets.delete(socket));
    });
    await new Promise<void>((resolve) => server?.listen(port, '127.0.0.1', resolve));
    port = (server.address() as AddressInfo).port;
  };
  await listen();
  return {
    port,
    cut: async () => {
      for (const s of sockets) s.destroy();
      await new Promise<void>((resolve) => server?.close(() => resolve()));
    },
    mend: listen,
  };
}

/** Every file of the state folder, as text. */
export async function stateText(stateDir: string): Promise<string> {
  const names = await readdir(stateDir);
  return (await Promise.all(names.map((n) => readFile(join(stateDir, n), 'utf8')))).join('\n');
}

export const removeState = (dir: string): Promise<void> => rm(dir, { recursive: true, force: true });
