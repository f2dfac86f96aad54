import { execFileSync } from 'node:child_process';
import { mkdirSync, symlinkSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { diffBuilds } from '../../src/stick-build/index.js';
import { tempFolder } from '../support/temp-folder.js';

/** Two build folders of one site `s1`, as a hostile or careless sender could hand them over. */
function builds(name: string, oldYaml: string): { before: string; after: string } {
  const root = tempFolder(name);
  const [before, after] = [join(root, 'old'), join(root, 'new')];
  mkdirSync(join(before, 's1'), { recursive: true });
  mkdirSync(join(after, 's1'), { recursive: true });
  writeFileSync(join(before, 's1/mpprov.yaml'), oldYaml);
  return { before, after };
}

const WITH_PASSWORD = `version: 1
monitoring_points:
  - name: mp-1
    interfaces:
      eth1:
        dot1x:
          identity: mp-1
          password: Inline-Secret-77
`;

describe('stick diff with hostile builds', () => {
  it('never shows an inline secret when the block holding it changes type', async () => {
    const { before, after } = builds('diff-secret', WITH_PASSWORD);
    writeFileSync(
      join(after, 's1/mpprov.yaml'),
      'version: 1\nmonitoring_points:\n  - name: mp-1\n    interfaces:\n      eth1: [1]\n',
    );
    const outcome = await diffBuilds(before, after);
    expect(outcome).toEqual({
      ok: true,
      lines: ['~ s1 mp-1: interfaces.eth1: {"dot1x":{"identity":"mp-1","password":"(secret)"}} -> [1]'],
    });
  });

  it('says a FIFO or a link to /dev/zero in place of mpprov.yaml cannot be read, without waiting on it', async () => {
    const { before, after } = builds('diff-fifo', WITH_PASSWORD);
    execFileSync('mkfifo', [join(after, 's1/mpprov.yaml')]);
    const fifo = await diffBuilds(before, after);
    expect(fifo).toEqual({
      ok: true,
      lines: ['! s1 (new build): mpprov.yaml is a FIFO (named pipe), not a regular file', '- s1 mp-1: removed'],
    });
    const other = builds('diff-zero', WITH_PASSWORD);
    symlinkSync('/dev/zero', join(other.after, 's1/mpprov.yaml'));
    const zero = await diffBuilds(other.before, other.after);
    expect(zero).toEqual({
      ok: true,
      lines: ['! s1 (new build): mpprov.yaml is a link that leads outside its folder', '- s1 mp-1: removed'],
    });
  });

  it('never shows a secret under a key the validator would withhold: misspelt, or named like a secret', async () => {
    const edited = (word: string) =>
      [
        'version: 1',
        'monitoring_points:',
        '  - name: mp-1',
        `    pasword: ${word}-Misspelt-1`,
        `    pw: ${word}-Short-2`,
        `    admin_passwd: ${word}-Passwd-3`,
        '    interfaces:',
        `      wlan0: { wireless: { ssid: branch, wifi_psk: ${word}-Psk-4 } }`,
        '',
      ].join('\n');
    const { before, after } = builds('diff-hand-edited', edited('Old'));
    writeFileSync(join(after, 's1/mpprov.yaml'), edited('New'));
    const outcome = await diffBuilds(before, after);
    expect(outcome).toEqual({
      ok: true,
      lines: [
        '~ s1 mp-1: pasword: (changed)',
        '~ s1 mp-1: pw: (changed)',
        '~ s1 mp-1: admin_passwd: (changed)',
        '~ s1 mp-1: interfaces.wlan0.wireless.wifi_psk: (changed)',
      ],
    });
  });

  it('never shows an inline secret that an alias repeats under a key that is no secret', async () => {
    const edited = (word: string) =>
      [
        'version: 1',
        'monitoring_points:',
        '  - name: mp-1',
        `    password: &pw ${word}-Anchored-5`,
        '    description: *pw',
        '    interfaces:',
        '      eth1:',
        `        dot1x: &x { identity: mp-1, password: ${word}-Dot1x-6 }`,
        `      eth2: { ipv4: { method: dhcp }, note: *x, psk: &list [${word}-Listed-7] }`,
        '      eth3: { tags: *list }',
        '',
      ].join('\n');
    const { before, after } = builds('diff-alias', edited('Old'));
    writeFileSync(join(after, 's1/mpprov.yaml'), edited('New'));
    const outcome = await diffBuilds(before, after);
    expect(JSON.stringify(outcome)).not.toMatch(/Anchored|Dot1x-6|Listed/);
    expect(outcome).toMatchObject({ ok: true });
  });
});
