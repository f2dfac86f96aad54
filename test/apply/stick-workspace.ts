import { cpSync, mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { startSimulator, type SimulatorHandle, type SimulatorOptions } from '../../src/simulator/index.js';
import { type AgentConfig, defaultAgentConfig } from '../../src/config/index.js';

export const profilesDir = fileURLToPath(new URL('../../profiles/', import.meta.url));

/** The password in profiles/secrets/admin.pw: a simulated device started with it accepts the profiles. */
export const PROFILE_ADMIN_PASSWORD = readFileSync(join(profilesDir, 'secrets/admin.pw'), 'utf8').trim();

/**
 * A simulated MP that a profile can reach unchanged but for its URL: same admin password, and a
 * certificate issued by the profiles' throwaway device CA (which the profiles trust).
 */
export function startProfileDevice(options: SimulatorOptions = {}): Promise<SimulatorHandle> {
  return startSimulator({
    password: PROFILE_ADMIN_PASSWORD,
    certificatePem: readFileSync(join(profilesDir, 'certs/device-https-cert.pem'), 'utf8'),
    privateKeyPem: readFileSync(join(profilesDir, 'certs/device-https-key.pem'), 'utf8'),
    restartMs: 150,
    serviceRateLimit: false,
    ...options,
  });
}

/** A copy of profiles/ in a temp folder with `profile` pointed at `url`; returns the profile's path. */
export function stickFromProfile(profile: string, url: string, edit: (text: string) => string = (t) => t): string {
  const dir = mkdtempSync(join(tmpdir(), 'mpprov-stick-'));
  cpSync(profilesDir, dir, { recursive: true });
  const file = join(dir, profile);
  writeFileSync(file, edit(readFileSync(file, 'utf8').replace('https://192.0.2.10', url)));
  return file;
}

export function testAgentConfig(overrides: Partial<AgentConfig> = {}): AgentConfig {
  return { ...defaultAgentConfig(), stateDir: mkdtempSync(join(tmpdir(), 'mpprov-state-')), restartTimeoutMs: 20_000, ...overrides };
}

export function writeRequests(device: SimulatorHandle): { method: string; path: string }[] {
  return device.requests().filter((r) => r.method !== 'GET').map((r) => ({ method: r.method, path: r.path }));
}

/** A stick folder with the profiles' certificates and `config` as mpprov.yaml; returns the file. */
export function stickWithConfig(config: string): string {
  const dir = mkdtempSync(join(tmpdir(), 'mpprov-stick-'));
  cpSync(join(profilesDir, 'certs'), join(dir, 'certs'), { recursive: true });
  cpSync(join(profilesDir, 'secrets'), join(dir, 'secrets'), { recursive: true });
  const file = join(dir, 'mpprov.yaml');
  writeFileSync(file, config);
  return file;
}

/** The top of a stick file for one simulated device, trusting it by its pinned fingerprint. */
export function stickHead(device: SimulatorHandle, extra = ''): string {
  return `version: 1
monitoring_points:
  - name: mp1
    url: ${device.url}
    password_file: secrets/admin.pw
    tls: { fingerprint_sha256: "${device.fingerprintSha256}" }
${extra}`;
}

/** Write requests as `METHOD path [name family]`, the order the documentation prescribes. */
export function writeSequence(device: SimulatorHandle): string[] {
  return device
    .requests()
    .filter((r) => r.method !== 'GET')
    .map((r) => {
      const body = (r.body ?? {}) as Record<string, unknown>;
      const what = typeof body.name === 'string' ? ` ${body.name} ${String(body.family)}` : r.query.family !== undefined ? ` family=${r.query.family}` : '';
      return `${r.method} ${r.path}${what}`;
    });
}
