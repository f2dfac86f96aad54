import { copyFileSync, cpSync, readFileSync, writeFileSync } from 'node:fs';
import { basename, dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { type AgentConfig, defaultAgentConfig } from '../../src/config/index.js';
import type { SimulatorHandle, SimulatorOptions } from '../../src/simulator/index.js';
import { tempFolder } from './temp-folder.js';

/**
 * The tests' one stick workspace: stick folders on disk (a copy of a profile, or a file of the
 * test's own beside the profiles' certificates and secrets), the `mpprov.yaml` text for simulated
 * devices, the same as the files of a FAT image, and the engine's agent settings with a state
 * folder of their own. Every folder lives under the run's temp root.
 */

export const profilesDir = fileURLToPath(new URL('../../profiles/', import.meta.url));

/** The password in profiles/secrets/admin.pw: a simulated device started with it accepts the profiles. */
export const PROFILE_ADMIN_PASSWORD = readFileSync(join(profilesDir, 'secrets/admin.pw'), 'utf8').trim();

/**
 * A simulated MP that a profile can reach unchanged but for its URL: the same admin password, and
 * a certificate issued by the profiles' throwaway device CA (which the profiles trust).
 */
export const PROFILE_DEVICE: SimulatorOptions = {
  password: PROFILE_ADMIN_PASSWORD,
  certificatePem: readFileSync(join(profilesDir, 'certs/device-https-cert.pem'), 'utf8'),
  privateKeyPem: readFileSync(join(profilesDir, 'certs/device-https-key.pem'), 'utf8'),
  restartMs: 150,
  serviceRateLimit: false,
};

/** The inline 802.1X password stickYaml writes with `dot1x: true`: a second kind of secret on the stick. */
export const PEAP_PASSWORD = 'Peap-Secret-4711-xyz';

/** A copy of profiles/ with `profile` pointed at `url` (and edited by `edit`); returns the profile's path. */
export function stickFromProfile(profile: string, url: string, edit: (text: string) => string = (t) => t): string {
  const dir = tempFolder('stick');
  cpSync(profilesDir, dir, { recursive: true });
  const file = join(dir, profile);
  writeFileSync(file, edit(readFileSync(file, 'utf8').replace('https://192.0.2.10', url)));
  return file;
}

/** A stick folder with the profiles' certificates and secrets and `config` as mpprov.yaml; returns the file. */
export function stickWithConfig(config: string): string {
  const dir = tempFolder('stick');
  cpSync(join(profilesDir, 'certs'), join(dir, 'certs'), { recursive: true });
  cpSync(join(profilesDir, 'secrets'), join(dir, 'secrets'), { recursive: true });
  const file = join(dir, 'mpprov.yaml');
  writeFileSync(file, config);
  return file;
}

/** Copies files into the stick's certs/ folder (beside the profiles' certificates) under their own names. */
export function addToStick(stickFile: string, files: readonly string[]): void {
  for (const file of files) copyFileSync(file, join(dirname(stickFile), 'certs', basename(file)));
}

/** One monitoring_points entry for a simulated device: its URL, its password from a file on the stick, its certificate pinned. */
/** What a stick needs to name a device: any HTTPS server on loopback (a simulator, a lying device). */
export type StickTarget = Pick<SimulatorHandle, 'url' | 'fingerprintSha256'>;

function deviceLines(name: string, device: StickTarget, passwordFile: string, username?: string): string[] {
  return [
    `  - name: ${name}`,
    `    url: ${device.url}`,
    ...(username === undefined ? [] : [`    username: ${username}`]),
    `    password_file: ${passwordFile}`,
    `    tls: { fingerprint_sha256: "${device.fingerprintSha256}" }`,
  ];
}

/** The top of a stick file for one simulated device started with PROFILE_DEVICE (secrets/admin.pw); `extra` follows it. */
export function stickHead(device: StickTarget, extra = ''): string {
  return `${['version: 1', 'monitoring_points:', ...deviceLines('mp1', device, 'secrets/admin.pw')].join('\n')}\n${extra}`;
}

export interface StickDevice {
  name: string;
  sim: SimulatorHandle;
  /** eth1's static address; default 192.0.2.10. */
  address?: string;
  /** Adds 802.1X PEAP with PEAP_PASSWORD inline, so a second kind of secret is on the stick. */
  dot1x?: boolean;
  /** Network paths the MP is to measure (`paths:`), in this order. */
  paths?: readonly { target: string; location?: string }[];
}

/** mpprov.yaml for any simulated devices: each with its password in secrets/<name>.pw and a static eth1. */
export function stickYaml(devices: readonly StickDevice[]): string {
  const lines = ['version: 1', 'monitoring_points:'];
  for (const d of devices) {
    lines.push(...deviceLines(d.name, d.sim, `secrets/${d.name}.pw`, 'admin'));
    if (d.paths !== undefined && d.paths.length > 0) {
      lines.push('    paths:');
      for (const path of d.paths) {
        lines.push(`      - target: ${path.target}`);
        if (path.location !== undefined) lines.push(`        location: ${JSON.stringify(path.location)}`);
      }
    }
    lines.push(
      '    interfaces:',
      '      eth1:',
      `        ipv4: { method: static, address: ${d.address ?? '192.0.2.10'}/24, gateway: 192.0.2.1 }`,
    );
    if (d.dot1x === true) {
      lines.push(
        `        dot1x: { eap: peap, inner: mschapv2, identity: mp01@corp.example, password: "${PEAP_PASSWORD}" }`,
      );
    }
  }
  return `${lines.join('\n')}\n`;
}

/** stickYaml's mpprov.yaml plus each device's password file, as the files of a stick (a FAT image). */
export function stickFiles(devices: readonly StickDevice[]): Record<string, string> {
  const files: Record<string, string> = { 'mpprov.yaml': stickYaml(devices) };
  for (const d of devices) files[`secrets/${d.name}.pw`] = `${d.sim.password}\n`;
  return files;
}

/** A state folder of its own, as `--state-dir` takes it. */
export function stateDir(): string {
  return tempFolder('state');
}

/** The engine's agent settings for a test: the defaults, a fresh state folder, and room for slow restarts. */
export function testAgentConfig(overrides: Partial<AgentConfig> = {}): AgentConfig {
  return { ...defaultAgentConfig(), stateDir: stateDir(), restartTimeoutMs: 20_000, ...overrides };
}
