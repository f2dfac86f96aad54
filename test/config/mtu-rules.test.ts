import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { validateStick } from '../../src/certs/index.js';
import { desiredDevice } from '../../src/plan/index.js';
import { tempFolder } from '../support/temp-folder.js';

/** A stick whose one interface, eth0, has these lines, validated. */
async function stickWith(interfaceLines: string) {
  const file = join(tempFolder('mtu-rules'), 'mpprov.yaml');
  writeFileSync(
    file,
    [
      'version: 1',
      'monitoring_points:',
      '  - name: mp1',
      '    url: https://192.0.2.10',
      '    password: pw-mtu-1',
      '    tls: { fingerprint_sha256: "5E1F00112233445566778899AABBCCDDEEFF00112233445566778899AABBCCDD" }',
      '    interfaces:',
      '      eth0:',
      ...interfaceLines.split('\n').map((line) => `        ${line}`),
      '',
    ].join('\n'),
  );
  return validateStick(file);
}

/** An interface's MTU, given at link, ipv4 or ipv6, judged against the families it carries. */
async function problemsOf(interfaceLines: string): Promise<string[]> {
  return (await stickWith(interfaceLines)).problems.map((p) => `${p.severity} ${p.path} ${p.message}`);
}

describe('the MTU rules', () => {
  it('takes one MTU in two places when they agree', async () => {
    expect(await problemsOf('ipv4: { method: dhcp, mtu: 9000 }\nlink: { mtu: 9000 }')).toEqual([]);
  });

  it('warns that an MTU below 1280 turns IPv6 off where the interface has IPv6', async () => {
    expect(await problemsOf('ipv4: { method: dhcp }\nipv6: { method: auto }\nlink: { mtu: 1000 }')).toEqual([
      'warning monitoring_points[0].interfaces.eth0.link.mtu mtu 1000 is below 1280, the least IPv6 works with: the Monitoring Point turns IPv6 off on this interface',
    ]);
    expect(await problemsOf('ipv4: { method: dhcp, mtu: 576 }')).toEqual([]);
    expect(await problemsOf('ipv4: { method: dhcp }\nipv6: { method: manual, mtu: 1000 }')).toEqual([]);
  });

  it("gives the device the MTU written under ipv4 (the inventory template's place), in both stanzas", async () => {
    const stick = await stickWith('ipv4: { method: dhcp, mtu: 9000 }\nipv6: { method: auto }');
    expect(stick.problems).toEqual([]);
    const [eth0] = desiredDevice(stick, 0).interfaces;
    expect(eth0?.stanzas.map((s) => [s.family, s.fields.mtu])).toEqual([
      ['inet', 9000],
      ['inet6', 9000],
    ]);
  });
});
