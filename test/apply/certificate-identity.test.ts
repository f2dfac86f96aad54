import { execFileSync } from 'node:child_process';
import { readFileSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { applyFile } from './apply-helpers.js';
import { useSimulators } from '../support/simulator-fixture.js';
import { PROFILE_DEVICE, stickHead, stickWithConfig, testAgentConfig } from '../support/stick-workspace.js';

/**
 * One certificate, one name: the CA a device holds, re-saved with Windows line endings, a BOM and
 * a comment around its PEM block, or converted to DER, is the same CA. Against the simulator: the
 * second stick finds nothing to do, uploads nothing and does not restart the networking.
 */

const { start } = useSimulators(PROFILE_DEVICE);

const eth1 = (caFile: string) =>
  `    interfaces:\n      eth1:\n        ipv4: { method: static, address: 192.0.2.10/24 }\n        dot1x: { eap: peap, inner: mschapv2, identity: mp01@corp.example, password: "Peap-Secret-4711-xyz", ca_cert: ${caFile} }\n`;

const spellings: [string, (pem: string, dir: string) => Buffer][] = [
  ['with CRLF line endings', (pem) => Buffer.from(pem.replace(/\n/g, '\r\n'))],
  [
    'with a BOM and comments around the PEM block',
    (pem) => Buffer.from(`\ufeff# the RADIUS CA, re-saved\nsubject=CN=radius ca\n${pem}\n# end\n`),
  ],
  [
    'converted to DER',
    (_pem, dir) =>
      execFileSync('openssl', ['x509', '-in', join(dir, 'certs/radius-ca.pem'), '-outform', 'DER'], {
        stdio: ['ignore', 'pipe', 'pipe'],
      }),
  ],
];

describe('a certificate is known by its content, not by its file bytes', () => {
  it.each(spellings)('the installed CA %s: NO CHANGE, no upload, no restart', async (_name, respell) => {
    const device = await start();
    // One state folder for both runs: its secrets record knows the 802.1X password was sent.
    const agent = testAgentConfig();
    const first = await applyFile(stickWithConfig(stickHead(device, eth1('certs/radius-ca.pem'))), { agent });
    expect(first.result.devices[0]?.outcome).toBe('changed');
    expect(device.state().restarts).toBe(1);
    const installed = device.state().interfaces;
    const files = device.state().files;
    expect(files.map((f) => f.slot)).toEqual(['wpa_ca_cert']);
    const requestsBefore = device.requests().length;

    const file = stickWithConfig(stickHead(device, eth1('certs/radius-ca-again')));
    const dir = dirname(file);
    const pem = readFileSync(join(dir, 'certs/radius-ca.pem'), 'utf8');
    writeFileSync(join(dir, 'certs/radius-ca-again'), respell(pem, dir));
    const second = await applyFile(file, { agent });
    expect(second.result.devices[0]?.outcome).toBe('no-change');
    expect(second.result.devices[0]?.message).toBe('already matches the configuration: nothing to do, no restart');
    expect(device.state().restarts).toBe(1);
    // Only reads: no file uploaded, no stanza posted.
    expect(
      device
        .requests()
        .slice(requestsBefore)
        .filter((r) => r.method !== 'GET'),
    ).toEqual([]);
    expect(device.state().files).toEqual(files);
    expect(device.state().interfaces).toEqual(installed);
  });
});
