import type { SimulatorHandle } from '../../src/simulator/index.js';

/** mpprov.yaml for simulated devices: the admin password from a file on the stick, the device pinned. */

export const PEAP_PASSWORD = 'Peap-Secret-4711-xyz';

export interface StickDevice {
  name: string;
  sim: SimulatorHandle;
  address?: string;
  /** Adds 802.1X PEAP with an inline password, so a second kind of secret is on the stick. */
  dot1x?: boolean;
}

export function stickYaml(devices: readonly StickDevice[]): string {
  const lines = ['version: 1', 'monitoring_points:'];
  for (const d of devices) {
    lines.push(
      `  - name: ${d.name}`,
      `    url: ${d.sim.url}`,
      '    username: admin',
      `    password_file: secrets/${d.name}.pw`,
      `    tls: { fingerprint_sha256: "${d.sim.fingerprintSha256}" }`,
      '    interfaces:',
      '      eth1:',
      `        ipv4: { method: static, address: ${d.address ?? '192.0.2.10'}/24, gateway: 192.0.2.1 }`,
    );
    if (d.dot1x === true) {
      lines.push(`        dot1x: { eap: peap, inner: mschapv2, identity: mp01@corp.example, password: "${PEAP_PASSWORD}" }`);
    }
  }
  return `${lines.join('\n')}\n`;
}

/** mpprov.yaml plus each device's password file, as the files of a stick. */
export function stickFiles(devices: readonly StickDevice[]): Record<string, string> {
  const files: Record<string, string> = { 'mpprov.yaml': stickYaml(devices) };
  for (const d of devices) files[`secrets/${d.name}.pw`] = `${d.sim.password}\n`;
  return files;
}

/** The device's active eth1 stanza, as the simulator shows it. */
export function activeEth1(sim: SimulatorHandle): Record<string, unknown> | undefined {
  const eth1 = sim.state().interfaces.active.find((i) => i.name === 'eth1') as { families?: { inet?: Record<string, unknown> } } | undefined;
  return eth1?.families?.inet;
}
