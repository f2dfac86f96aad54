import { X509Certificate } from 'node:crypto';
import type { DeviceTrust } from '../admin-api/device-trust.js';
import type { AgentConfig } from './agent-config.js';
import type { LoadedStick } from './load-stick.js';
import { formatKeyPath, type KeyPath, Severity, type UnplacedProblem } from '../core/problem.js';
import type { MonitoringPoint } from './schema.js';
import type { Secret } from '../core/secret.js';
import { normaliseDeviceUrl } from './stick-rules.js';

/** How to reach one device: URL, credentials and TLS trust, after precedence is applied. */
export interface DeviceAccess {
  name: string;
  url: string;
  username: string;
  password: Secret;
  trust: DeviceTrust;
}

/**
 * Precedence for credentials and trust: the stick's file, then agent.yaml's `devices[url]`, then
 * its `defaults`. A device without a password or without trust is a problem, located at the entry.
 * The trust boundary: a password agent.yaml holds goes only with trust agent.yaml gives.
 */
export function resolveDeviceAccess(
  loaded: LoadedStick,
  index: number,
  agent: AgentConfig,
): { access: DeviceAccess } | { problem: UnplacedProblem } {
  const mp = loaded.model?.monitoring_points[index] as MonitoringPoint;
  const at: KeyPath = ['monitoring_points', index];
  const url = normaliseDeviceUrl(mp.url) ?? mp.url;
  const perDevice = agent.devices.get(url) ?? {};
  const defaults = agent.defaults;

  // The stick's own password is in the model, inline or read from password_file.
  const username = mp.username ?? perDevice.username ?? defaults.username ?? 'admin';
  const agentTrust = trustFromAgent(perDevice.tls) ?? trustFromAgent(defaults.tls);
  if (mp.password !== undefined) {
    // The stick's own credential: the stick may also say whom it trusts with it.
    let trust: DeviceTrust | undefined;
    if (mp.tls !== undefined) trust = trustFromStick(loaded, at, mp);
    trust ??= agentTrust;
    if (trust === undefined) {
      return missing(
        at,
        `no TLS trust for ${url}`,
        'add tls: { fingerprint_sha256: ... } to the stick, or trust for this device in agent.yaml',
      );
    }
    return { access: { name: mp.name, url, username, password: mp.password, trust } };
  }

  // The laptop's credential (devices[url], defaults, $CREDENTIALS_DIRECTORY): the stick is untrusted
  // input, so only trust agent.yaml itself gives for this URL may vouch for the device receiving it.
  // Otherwise a stick pinning any host's own certificate (or insecure: true) would collect it.
  const held = perDevice.password ?? defaults.password;
  if (held === undefined) {
    return missing(
      at,
      `no admin password for ${url}: the stick gives none and agent.yaml holds none for this device`,
      `add password_file: to the stick's entry, or a password for "${url}" under devices: (or defaults:) in agent.yaml`,
    );
  }
  if (agentTrust === undefined || agentTrust.kind === 'insecure') {
    const why =
      agentTrust?.kind === 'insecure'
        ? "agent.yaml's tls for it is insecure: true, which never carries the laptop's credentials"
        : mp.tls !== undefined
          ? "the stick's own tls block never vouches for a device that receives the laptop's credentials"
          : 'agent.yaml vouches for no TLS identity of this device';
    return missing(
      at,
      `refused before any connection: ${url} would receive the laptop's admin password from agent.yaml, but ${why}`,
      `add devices: { "${url}": { tls: { fingerprint_sha256: "<the device's SHA-256 fingerprint>" } } } (or defaults: { tls: { ca: /path/to/fleet-ca.pem } }) to agent.yaml, or give the device's password on the stick`,
    );
  }
  return { access: { name: mp.name, url, username, password: held, trust: agentTrust } };
}

function missing(path: KeyPath, message: string, hint: string): { problem: UnplacedProblem } {
  return { problem: { severity: Severity.Error, path, message, hint } };
}

function trustFromStick(loaded: LoadedStick, at: KeyPath, mp: MonitoringPoint): DeviceTrust | undefined {
  const tls = mp.tls;
  if (tls?.fingerprint_sha256 !== undefined) return { kind: 'fingerprint', sha256: tls.fingerprint_sha256 };
  if (tls?.ca !== undefined) {
    const file = loaded.files.get(formatKeyPath([...at, 'tls', 'ca']));
    if (file === undefined) return undefined;
    return { kind: 'ca', caPem: toPem(file.bytes) };
  }
  if (tls?.insecure === true) return { kind: 'insecure' };
  return undefined;
}

function trustFromAgent(
  tls: { fingerprintSha256?: string; caPem?: string; insecure?: boolean } | undefined,
): DeviceTrust | undefined {
  if (tls?.fingerprintSha256 !== undefined) return { kind: 'fingerprint', sha256: tls.fingerprintSha256 };
  if (tls?.caPem !== undefined) return { kind: 'ca', caPem: toPem(Buffer.from(tls.caPem)) };
  if (tls?.insecure === true) return { kind: 'insecure' };
  return undefined;
}

/** TLS wants PEM; a stick may carry the CA as DER. */
function toPem(bytes: Buffer): string {
  const text = bytes.toString('latin1');
  if (text.includes('-----BEGIN CERTIFICATE-----')) return text;
  try {
    return new X509Certificate(bytes).toString();
  } catch {
    return text;
  }
}
