import { startControlServer } from './control-server.js';
import { generateEcKeyPair } from './self-signed-certificate.js';
import type { SimulatedDevice } from './simulated-device.js';
import { SimulatorError, SimulatorErrorCode } from './simulator-error.js';
import {
  controlHost,
  createDevice,
  handleOf,
  resolveHost,
  type SimulatorHandle,
  type SimulatorOptions,
} from './simulator.js';

/**
 * Many independent simulated devices in one process, for load tests of the provisioning engine.
 * The fleet shares one EC key pair (each device still has its own certificate, so its own
 * fingerprint) and one control server; everything else is per device.
 */

export interface FleetManifestDevice {
  index: number;
  url: string;
  username: string;
  password: string;
  fingerprint_sha256: string;
  control_url: string;
}

export interface FleetManifest {
  control_url: string;
  devices: FleetManifestDevice[];
}

export interface Fleet {
  devices: SimulatorHandle[];
  manifest: FleetManifest;
  close(): Promise<void>;
}

export const MAX_FLEET = 2000;

export async function startFleet(count: number, options: SimulatorOptions = {}): Promise<Fleet> {
  if (!Number.isInteger(count) || count < 1 || count > MAX_FLEET) {
    throw new SimulatorError(SimulatorErrorCode.Usage, `--devices must be an integer from 1 to ${MAX_FLEET}.`);
  }
  const host = resolveHost(options);
  const keyPair = options.certificatePem === undefined ? generateEcKeyPair() : undefined;
  const devices: SimulatedDevice[] = [];
  for (let i = 0; i < count; i++) devices.push(createDevice(options, i, host, keyPair));
  const closeAll = async () => {
    await Promise.all(devices.map((d) => d.close()));
  };
  try {
    await Promise.all(devices.map((d) => d.start()));
  } catch (error) {
    await closeAll();
    throw error;
  }
  let control: Awaited<ReturnType<typeof startControlServer>>;
  try {
    control = await startControlServer(devices, {
      host: controlHost(host),
      port: options.controlPort ?? 0,
      service: options.serviceLog,
    });
  } catch (error) {
    await closeAll();
    throw error;
  }
  const handles = devices.map((d) => handleOf(d, control, () => d.close()));
  return {
    devices: handles,
    manifest: {
      control_url: control.url,
      devices: handles.map((h, index) => ({
        index,
        url: h.url,
        username: h.username,
        password: h.password,
        fingerprint_sha256: h.fingerprintSha256,
        control_url: h.controlUrl,
      })),
    },
    close: async () => {
      await closeAll();
      await control.close();
    },
  };
}
