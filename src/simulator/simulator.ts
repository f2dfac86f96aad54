import { randomBytes } from 'node:crypto';
import { isIP } from 'node:net';
import type { AuthenticatorProfile } from './authenticator-profile.js';
import { startControlServer, type ControlServer, type ServiceRequestSource } from './control-server.js';
import { describeBuiltInModel, type DeviceDescription } from './device-description.js';
import type { Dot1xBackend } from './dot1x-backend.js';
import { modelDot1xBackend } from './dot1x-model-backend.js';
import { createRealDot1xBackend, RealDot1xBackend } from './dot1x-real-backend.js';
import type { FaultSpec } from './faults.js';
import { DEFAULT_SERVICE_RATE_LIMIT, type RateLimit } from './rate-limiter.js';
import type { RequestLogEntry } from './request-log.js';
import { createSelfSignedCertificate, fingerprintOfCertificate, type EcKeyPair } from './self-signed-certificate.js';
import { SimulatedDevice, type DeviceEventHooks, type DeviceTls, type ResetOptions } from './simulated-device.js';
import { SimulatorError, SimulatorErrorCode } from './simulator-error.js';
import type { SimulatorState } from './simulator-state.js';

export interface SimulatorOptions {
  /** Default 127.0.0.1; anything but loopback needs allowRemote. */
  host?: string;
  /** Default 0: a free port. In fleet mode, device n listens on port + n (0: each a free port). */
  port?: number;
  allowRemote?: boolean;
  /** The device's TLS certificate and key (PEM); default a self-issued EC certificate. */
  certificatePem?: string;
  privateKeyPem?: string;
  /** Default "admin". */
  username?: string;
  /** Default random. */
  password?: string;
  /** A built-in model (m50, m22, m70, virtual); default m50. Ignored when `device` is given. */
  model?: string;
  /** Model, ports and starting configuration, e.g. from loadDeviceDescription(). */
  device?: DeviceDescription;
  /** The interface the client talks through; default eth0. */
  managementInterface?: string;
  /** Switch ports that demand 802.1X, by physical interface. */
  switchPorts?: Readonly<Record<string, AuthenticatorProfile>>;
  /** Outage after a networking restart; default 3000 ms. */
  restartMs?: number;
  /** Outage after a reboot; default 15000 ms. */
  rebootMs?: number;
  faults?: readonly (string | FaultSpec)[];
  /** Limit on PUT /service/...; default 1 per second and 12 per minute; false switches it off. */
  serviceRateLimit?: RateLimit | false;
  /** Port of the control server (test-only, loopback); default 0: a free port. */
  controlPort?: number;
  /**
   * Who decides 802.1X on demanding switch ports: `model` (default, in-process), `real` (hostapd
   * and wpa_supplicant in network namespaces the simulator creates and removes; needs root), or
   * a backend instance, which the caller closes. A fleet takes `model` or an instance.
   */
  dot1xBackend?: Dot1xBackend | Dot1xBackendName;
  /** Request log entries kept per device; default 1000. */
  requestLogLimit?: number;
  /**
   * Show `dot1x_state` beside `families` in the active view of GET /interface/: a rehearsal aid
   * the model does not have. Default: the device file's `show_dot1x_state`, else off, so that the
   * API shows exactly the model's view. The control port's state always shows it.
   */
  showDot1xState?: boolean;
  /** Callbacks on each device's outages (restart began, answering again, management 802.1X failed). */
  hooks?: DeviceEventHooks;
  /** The simulated service beside the devices: its request log is then read on the control port too. */
  serviceLog?: ServiceRequestSource;
}

export const DOT1X_BACKENDS = ['model', 'real'] as const;
export type Dot1xBackendName = (typeof DOT1X_BACKENDS)[number];

export interface SimulatorHandle {
  /** https://127.0.0.1:PORT, the URL a stick names. */
  readonly url: string;
  /** `${url}/api/v1` */
  readonly apiUrl: string;
  readonly port: number;
  readonly username: string;
  readonly password: string;
  /** Of the certificate presented now (changes with the new-cert fault). */
  readonly fingerprintSha256: string;
  readonly certificatePem: string;
  /** Control base of this device; append /state, /requests, /faults or /reset. */
  readonly controlUrl: string;
  /** Which 802.1X backend decides its switch ports: `model`, `real` or `custom`. */
  readonly dot1xBackend: string;
  /** Whether GET /interface/ shows `dot1x_state` (a rehearsal aid beyond the model). */
  readonly showDot1xState: boolean;
  state(): SimulatorState;
  requests(): RequestLogEntry[];
  clearRequests(): void;
  setFaults(faults: readonly (string | FaultSpec)[]): void;
  reset(options?: ResetOptions): Promise<void>;
  close(): Promise<void>;
}

const LOOPBACK = (host: string) => host === 'localhost' || host === '::1' || /^127\.\d+\.\d+\.\d+$/.test(host);

function checkHost(host: string, allowRemote: boolean): void {
  if (isIP(host) === 0 && host !== 'localhost') {
    throw new SimulatorError(SimulatorErrorCode.Usage, `--host must be an IP address; "${host}" is not one.`);
  }
  if (!LOOPBACK(host) && !allowRemote) {
    throw new SimulatorError(
      SimulatorErrorCode.Usage,
      `Refusing to listen on ${host}: the simulator listens on loopback unless --allow-remote is given.`,
    );
  }
}

/** Starts one simulated Monitoring Point and its control server. */
export async function startSimulator(options: SimulatorOptions = {}): Promise<SimulatorHandle> {
  const host = resolveHost(options);
  // A backend the simulator creates is its own: closed with it, and on every failure to start.
  const owned = options.dot1xBackend === 'real' ? await createRealDot1xBackend() : undefined;
  let device: SimulatedDevice;
  let control: ControlServer;
  try {
    device = createDevice(owned === undefined ? options : { ...options, dot1xBackend: owned }, 0, host, undefined);
    await device.start();
    try {
      control = await startControlServer([device], {
        host: controlHost(host),
        port: options.controlPort ?? 0,
        service: options.serviceLog,
      });
    } catch (error) {
      await device.close();
      throw error;
    }
  } catch (error) {
    await owned?.close();
    throw error;
  }
  return handleOf(device, control, async () => {
    await device.close();
    await control.close();
    await owned?.close();
  });
}

export function resolveHost(options: SimulatorOptions): string {
  const host = options.host ?? '127.0.0.1';
  checkHost(host, options.allowRemote === true);
  return host === 'localhost' ? '127.0.0.1' : host;
}

/** The control server stays on loopback even when the device listens elsewhere. */
export function controlHost(host: string): string {
  return host === '::1' ? '::1' : '127.0.0.1';
}

export function createDevice(
  options: SimulatorOptions,
  index: number,
  host: string,
  keyPair: EcKeyPair | undefined,
): SimulatedDevice {
  const switchPorts = new Map(Object.entries(options.switchPorts ?? {}));
  const description = options.device ?? defaultDescription(options.model, host);
  for (const port of switchPorts.keys()) {
    if (!Object.hasOwn(description.model.interfaces, port)) {
      throw new SimulatorError(
        SimulatorErrorCode.Usage,
        `Switch port "${port}" is not a physical interface of model ${description.model.model}.`,
      );
    }
  }
  const dot1xBackend = backendOf(options.dot1xBackend);
  if (dot1xBackend instanceof RealDot1xBackend) {
    const wireless = [...switchPorts.keys()].find((port) => description.model.interfaces[port]?.kind === 'wireless');
    if (wireless !== undefined) {
      throw new SimulatorError(
        SimulatorErrorCode.Usage,
        `Switch port "${wireless}" faces a wireless interface; the real 802.1X backend drives wired ports only.`,
      );
    }
  }
  const basePort = options.port ?? 0;
  return new SimulatedDevice({
    index,
    host,
    port: basePort === 0 ? 0 : basePort + index,
    username: options.username ?? 'admin',
    password: options.password ?? randomBytes(12).toString('base64url'),
    tls: deviceTls(options, index, keyPair),
    keyPair,
    description,
    managementInterface: options.managementInterface ?? 'eth0',
    switchPorts,
    dot1xBackend,
    restartMs: options.restartMs ?? 3000,
    rebootMs: options.rebootMs ?? 15000,
    faults: options.faults ?? [],
    serviceRateLimit: options.serviceRateLimit ?? DEFAULT_SERVICE_RATE_LIMIT,
    requestLogLimit: options.requestLogLimit ?? 1000,
    showDot1xState: options.showDot1xState ?? description.showDot1xState ?? false,
    hooks: options.hooks,
  });
}

function backendOf(option: SimulatorOptions['dot1xBackend']): Dot1xBackend {
  if (option === undefined || option === 'model') return modelDot1xBackend;
  if (option === 'real') {
    // Creating one takes namespaces and must be awaited and closed: startSimulator does that.
    throw new SimulatorError(
      SimulatorErrorCode.Usage,
      'A fleet needs a real 802.1X backend instance: pass createRealDot1xBackend() as dot1xBackend and close it after the fleet.',
    );
  }
  return option;
}

function dot1xBackendName(backend: Dot1xBackend): string {
  return backend === modelDot1xBackend ? 'model' : backend instanceof RealDot1xBackend ? 'real' : 'custom';
}

/** A built-in model; listening on IPv6, eth0 also gets its inet6 address (SLAAC) from the start. */
function defaultDescription(model: string | undefined, host: string): DeviceDescription {
  const description = describeBuiltInModel(model);
  if (isIP(host) === 6) description.active.push({ name: 'eth0', family: 'inet6', method: 'auto' });
  return description;
}

function deviceTls(options: SimulatorOptions, index: number, keyPair: EcKeyPair | undefined): DeviceTls {
  if (options.certificatePem !== undefined || options.privateKeyPem !== undefined) {
    if (options.certificatePem === undefined || options.privateKeyPem === undefined) {
      throw new SimulatorError(SimulatorErrorCode.Usage, '--cert and --key go together.');
    }
    return {
      certificatePem: options.certificatePem,
      privateKeyPem: options.privateKeyPem,
      fingerprintSha256: fingerprintOfCertificate(options.certificatePem),
    };
  }
  const certificate = createSelfSignedCertificate({
    commonName: `mpprov simulated Monitoring Point ${index}`,
    ...(keyPair !== undefined ? { keyPair } : {}),
  });
  return {
    certificatePem: certificate.certificatePem,
    privateKeyPem: certificate.privateKeyPem,
    fingerprintSha256: certificate.fingerprintSha256,
  };
}

export function handleOf(device: SimulatedDevice, control: ControlServer, close: () => Promise<void>): SimulatorHandle {
  return {
    get url() {
      return device.url;
    },
    get apiUrl() {
      return `${device.url}/api/v1`;
    },
    get port() {
      return device.port;
    },
    username: device.settings.username,
    password: device.settings.password,
    get fingerprintSha256() {
      return device.tls.fingerprintSha256;
    },
    get certificatePem() {
      return device.tls.certificatePem;
    },
    controlUrl: control.deviceBase(device.settings.index),
    dot1xBackend: dot1xBackendName(device.settings.dot1xBackend),
    showDot1xState: device.showDot1xState,
    state: () => device.state(),
    requests: () => device.log.list(),
    clearRequests: () => device.log.clear(),
    setFaults: (faults) => device.faults.set(faults),
    reset: (options) => device.reset(options),
    close,
  };
}
