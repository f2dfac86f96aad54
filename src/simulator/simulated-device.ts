import { createHash, timingSafeEqual } from 'node:crypto';
import type { IncomingMessage, ServerResponse } from 'node:http';
import { createServer, type Server } from 'node:https';
import type { Socket } from 'node:net';
import { AccessControlList } from './access-control-list.js';
import { handleAdminRequest, type AdminApiDevice, type OutageKind } from './admin-api.js';
import type { AuthenticatorProfile } from './authenticator-profile.js';
import type { DeviceConfig } from './device-config.js';
import { configFromDescription, type DeviceDescription } from './device-description.js';
import type { Dot1xBackend } from './dot1x-backend.js';
import { FaultSet, type FaultSpec } from './faults.js';
import { sendEndlessJson, sendJson } from './http-exchange.js';
import { evaluateNetwork, type NetworkStatus } from './network-status.js';
import { RateLimiter, type RateLimit } from './rate-limiter.js';
import { RequestLog, redactBody, type RequestLogEntry } from './request-log.js';
import { createSelfSignedCertificate, type EcKeyPair } from './self-signed-certificate.js';
import { SimulatorError, SimulatorErrorCode } from './simulator-error.js';
import { snapshotState, type SimulatorState } from './simulator-state.js';

/**
 * One simulated Monitoring Point: an HTTPS server with the Admin API, its configuration, and the
 * behaviour of a real device around it: outages after restart and reboot, 802.1X lockout of the
 * management interface, rate limits and injected faults. A class because a device is state.
 */

export const Phase = {
  Up: 'up',
  Restarting: 'restarting',
  Rebooting: 'rebooting',
  LockedOut: 'locked-out',
  Gone: 'gone',
  Closed: 'closed',
} as const;
export type Phase = (typeof Phase)[keyof typeof Phase];

export interface DeviceTls {
  certificatePem: string;
  privateKeyPem: string;
  fingerprintSha256: string;
}

export interface DeviceSettings {
  index: number;
  host: string;
  port: number;
  username: string;
  password: string;
  tls: DeviceTls;
  /** For the new-cert fault: a fleet shares one key pair. */
  keyPair?: EcKeyPair | undefined;
  description: DeviceDescription;
  managementInterface: string;
  switchPorts: ReadonlyMap<string, AuthenticatorProfile>;
  dot1xBackend: Dot1xBackend;
  restartMs: number;
  rebootMs: number;
  faults: readonly (string | FaultSpec)[];
  serviceRateLimit: RateLimit | false;
  requestLogLimit: number;
  /** `dot1x_state` in GET /interface/ (a rehearsal aid beyond the model); default off. */
  showDot1xState: boolean;
  hooks?: DeviceEventHooks | undefined;
}

/**
 * What a device's outages look like from outside, for whoever watches it (the simulated
 * monitoring service of `mpprov simulate --service`): plain callbacks with the device's index,
 * so the device knows nothing of who listens.
 */
export interface DeviceEventHooks {
  /** A networking restart (or reboot) began: the device stops answering. */
  restartStarted?(index: number): void;
  /** The device answers again after it. */
  answeringAgain?(index: number): void;
  /** After the restart, the management interface's port refused 802.1X: the MP cannot report. */
  managementDot1xFailed?(index: number): void;
}

export interface ResetOptions {
  /** Keep the current configuration, files and ACL (only clear the lockout). */
  keepConfig?: boolean;
  /** Keep the injected faults. */
  keepFaults?: boolean;
}

export class SimulatedDevice implements AdminApiDevice {
  config: DeviceConfig;
  acl = new AccessControlList();
  serviceLimiter: RateLimiter | undefined;
  readonly faults = new FaultSet();
  readonly log: RequestLog;
  readonly settings: DeviceSettings;
  phase: Phase = Phase.Up;
  port = 0;
  tls: DeviceTls;
  restarts = 0;
  reboots = 0;
  listenError: string | undefined;
  readonly showDot1xState: boolean;
  private status: NetworkStatus = { interfaces: new Map(), inUse: new Map() };
  private readonly server: Server;
  private readonly sockets = new Set<Socket>();
  private outageTimer: NodeJS.Timeout | undefined;
  private readonly expectedAuth: Buffer;

  constructor(settings: DeviceSettings) {
    this.settings = settings;
    this.showDot1xState = settings.showDot1xState;
    this.config = configFromDescription(settings.description);
    this.tls = settings.tls;
    this.log = new RequestLog(settings.requestLogLimit);
    this.serviceLimiter = settings.serviceRateLimit === false ? undefined : new RateLimiter(settings.serviceRateLimit);
    this.faults.set(settings.faults);
    this.expectedAuth = digest(`${settings.username}:${settings.password}`);
    this.server = createServer({ cert: this.tls.certificatePem, key: this.tls.privateKeyPem });
    this.server.on('connection', (socket: Socket) => {
      this.sockets.add(socket);
      socket.once('close', () => this.sockets.delete(socket));
    });
    this.server.on('request', (req: IncomingMessage, res: ServerResponse) => void this.onRequest(req, res, undefined));
    this.server.on(
      'checkContinue',
      (req: IncomingMessage, res: ServerResponse) => void this.onRequest(req, res, 'continue'),
    );
    // Node reports an empty `Expect:` header as an expectation too; the documented upload call
    // sends exactly that, and only a non-empty one is refused.
    this.server.on(
      'checkExpectation',
      (req: IncomingMessage, res: ServerResponse) =>
        void this.onRequest(req, res, (req.headers.expect ?? '').trim() === '' ? undefined : 'other'),
    );
    // A TLS handshake a client aborts (a pinning client refusing our certificate) is not an error.
    this.server.on('tlsClientError', () => undefined);
  }

  get url(): string {
    const host = this.settings.host.includes(':') ? `[${this.settings.host}]` : this.settings.host;
    return `https://${host}:${this.port}`;
  }

  network(): NetworkStatus {
    return this.status;
  }

  async start(): Promise<void> {
    this.status = await this.evaluate(false);
    if (this.status.lockout !== undefined) {
      throw new SimulatorError(
        SimulatorErrorCode.StartRefused,
        `The starting configuration makes the device unreachable: ${this.status.lockout}.`,
      );
    }
    await this.listen(this.settings.port);
    this.port = (this.server.address() as { port: number }).port;
  }

  state(): SimulatorState {
    return snapshotState(this);
  }

  async reset(options: ResetOptions = {}): Promise<void> {
    clearTimeout(this.outageTimer);
    this.outageTimer = undefined;
    if (options.keepConfig !== true) {
      this.config = configFromDescription(this.settings.description);
      this.acl = new AccessControlList();
      this.tls = this.settings.tls;
      this.server.setSecureContext({ cert: this.tls.certificatePem, key: this.tls.privateKeyPem });
    }
    this.status = await this.evaluate(false);
    this.serviceLimiter?.clear();
    if (options.keepFaults !== true) this.faults.set([]);
    if (!this.server.listening) await this.listen(this.port);
    this.phase = Phase.Up;
  }

  close(): Promise<void> {
    clearTimeout(this.outageTimer);
    this.outageTimer = undefined;
    this.phase = Phase.Closed;
    this.stopListening();
    return Promise.resolve();
  }

  private async onRequest(
    req: IncomingMessage,
    res: ServerResponse,
    expectation: 'continue' | 'other' | undefined,
  ): Promise<void> {
    const url = new URL(req.url ?? '/', 'https://device');
    const method = req.method ?? 'GET';
    const entry: RequestLogEntry = {
      time: new Date().toISOString(),
      method,
      path: url.pathname,
      query: Object.fromEntries(url.searchParams),
      status: null,
    };
    this.log.add(entry);
    try {
      if (this.faults.draws('drop', method, url.pathname)) {
        entry.fault = 'drop';
        req.socket.destroy();
        return;
      }
      const clockOffset = this.faults.clockOffsetMs();
      if (clockOffset !== 0) res.setHeader('date', new Date(Date.now() + clockOffset).toUTCString());
      const latency = this.faults.latencyFor(method, url.pathname);
      if (latency > 0) {
        entry.fault = `latency=${latency}ms`;
        await new Promise((resolve) => setTimeout(resolve, latency));
        if (req.socket.destroyed) return;
      }
      // A client that sent Expect may still hold its body back: close rather than reuse the connection.
      const close: Record<string, string> = expectation !== undefined ? { connection: 'close' } : {};
      if (this.faults.draws('error', method, url.pathname)) {
        entry.fault = 'error';
        entry.status = 500;
        sendJson(
          res,
          500,
          { success: false, error: 'Internal server error (injected fault).' },
          { connection: 'close' },
        );
        return;
      }
      const throttleMs = this.faults.takes('throttle', method, url.pathname);
      if (throttleMs !== undefined) {
        const seconds = Math.ceil(throttleMs / 1000);
        entry.fault = 'throttle';
        entry.status = 429;
        sendJson(
          res,
          429,
          { success: false, error: `Too many requests (injected fault); retry in ${seconds} s.` },
          { 'retry-after': String(seconds), connection: 'close' },
        );
        return;
      }
      const hugeBytes = this.faults.takes('huge-body', method, url.pathname);
      if (hugeBytes !== undefined) {
        entry.fault = 'huge-body';
        entry.status = 200;
        sendEndlessJson(res, hugeBytes);
        return;
      }
      const authError = this.checkAuth(req.headers.authorization);
      if (authError !== undefined) {
        entry.status = 401;
        sendJson(
          res,
          401,
          { success: false, error: authError },
          { 'www-authenticate': 'Basic realm="Monitoring Point"', ...close },
        );
        return;
      }
      if (expectation === 'other') {
        entry.status = 417;
        sendJson(
          res,
          417,
          { success: false, error: `Expect: ${req.headers.expect ?? ''} is not supported.` },
          { connection: 'close' },
        );
        return;
      }
      if (expectation === 'continue' && url.pathname !== '/api/v1/interface/file/') res.writeContinue();
      const answer = await handleAdminRequest(req, url, this);
      entry.status = answer.status;
      if (answer.logged !== undefined) entry.body = answer.logged;
      const outage = answer.outage;
      // Send the 202 first, then drop everything: the client must see the acceptance.
      sendJson(
        res,
        answer.status,
        answer.body,
        { ...close, ...answer.headers },
        outage === undefined ? undefined : () => this.beginOutage(outage),
      );
    } catch (error) {
      entry.status = 500;
      entry.body = redactBody({ error: String(error) });
      if (!res.headersSent)
        sendJson(res, 500, { success: false, error: 'Internal server error.' }, { connection: 'close' });
      else res.destroy();
    }
  }

  private checkAuth(header: string | undefined): string | undefined {
    if (header === undefined || !/^Basic\s+/i.test(header)) {
      return "Authentication required: send the device's administrative user name and password with HTTP Basic.";
    }
    const decoded = Buffer.from(header.replace(/^Basic\s+/i, ''), 'base64').toString('utf8');
    // Compare digests so that neither length nor content leaks through timing.
    return timingSafeEqual(digest(decoded), this.expectedAuth)
      ? undefined
      : 'Bad credentials: the user name or password is wrong.';
  }

  private beginOutage(kind: OutageKind): void {
    if (this.phase !== Phase.Up) return;
    this.phase = kind === 'restart' ? Phase.Restarting : Phase.Rebooting;
    if (kind === 'restart') this.restarts += 1;
    else this.reboots += 1;
    this.notify('restartStarted');
    // Let the 202 leave the socket buffers before the connections drop.
    setImmediate(() => this.stopListening());
    const delay = this.faults.takeRestartFault('restart-delay');
    const ms =
      delay !== undefined ? Number(delay.value) : kind === 'restart' ? this.settings.restartMs : this.settings.rebootMs;
    this.outageTimer = setTimeout(() => void this.endOutage(), ms);
  }

  private async endOutage(): Promise<void> {
    this.outageTimer = undefined;
    if (this.faults.takeRestartFault('pending-stuck') === undefined) {
      const changed = this.config.applyPending();
      const drop = this.faults.takeRestartFault('drop-field');
      if (drop !== undefined) for (const key of changed) this.config.dropActiveField(key, String(drop.value));
    }
    if (this.faults.takeRestartFault('new-cert') !== undefined) this.renewCertificate();
    this.status = await this.evaluate(true);
    if (this.phase === Phase.Closed) return;
    if (this.status.interfaces.get(this.settings.managementInterface)?.dot1xState === 'unauthorized') {
      this.notify('managementDot1xFailed');
    }
    if (this.status.lockout !== undefined) {
      this.phase = Phase.LockedOut;
      return;
    }
    if (this.faults.takeRestartFault('no-return') !== undefined) {
      this.phase = Phase.Gone;
      return;
    }
    try {
      await this.listen(this.port);
      this.phase = Phase.Up;
      this.notify('answeringAgain');
    } catch (error) {
      // Someone else took the port during the outage: the device stays away, and says why.
      this.phase = Phase.Gone;
      this.listenError = String(error);
    }
  }

  /** Tells the hooks; a listener's failure is its own and never disturbs the device. */
  private notify(event: keyof DeviceEventHooks): void {
    try {
      this.settings.hooks?.[event]?.(this.settings.index);
    } catch {
      // Deliberately ignored: the device behaves the same whoever watches it.
    }
  }

  private renewCertificate(): void {
    const certificate = createSelfSignedCertificate({
      commonName: `mpprov simulated Monitoring Point ${this.settings.index}`,
      ...(this.settings.keyPair !== undefined ? { keyPair: this.settings.keyPair } : {}),
    });
    this.tls = {
      certificatePem: certificate.certificatePem,
      privateKeyPem: certificate.privateKeyPem,
      fingerprintSha256: certificate.fingerprintSha256,
    };
    this.server.setSecureContext({ cert: this.tls.certificatePem, key: this.tls.privateKeyPem });
  }

  /**
   * Switch ports decide 802.1X after a networking restart (`enforce`). At start and after a
   * reset the ports let the device through, as a port does before its first authentication
   * round: otherwise a device on an 802.1X port could never be reached to be provisioned.
   */
  private evaluate(enforce: boolean): Promise<NetworkStatus> {
    return evaluateNetwork({
      config: this.config,
      switchPorts: enforce ? this.settings.switchPorts : new Map(),
      backend: this.settings.dot1xBackend,
      managementInterface: this.settings.managementInterface,
      listenHost: this.settings.host,
    });
  }

  private stopListening(): void {
    if (this.server.listening) this.server.close();
    this.server.closeAllConnections();
    for (const socket of this.sockets) socket.destroy();
    this.sockets.clear();
  }

  /** Listens on the port; retried briefly, since the port was only just released by us. */
  private async listen(port: number): Promise<void> {
    for (let attempt = 0; ; attempt++) {
      try {
        await new Promise<void>((resolve, reject) => {
          const onError = (error: Error) => reject(error);
          this.server.once('error', onError);
          this.server.listen({ host: this.settings.host, port }, () => {
            this.server.removeListener('error', onError);
            resolve();
          });
        });
        return;
      } catch (error) {
        if (attempt >= 20 || port === 0) throw error;
        await new Promise((resolve) => setTimeout(resolve, 50));
      }
    }
  }
}

function digest(text: string): Buffer {
  return createHash('sha256').update(text).digest();
}
