import { readFileSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { validateStick } from '../../src/certs/index.js';
import { profilesDir, stickWithConfig } from '../support/stick-workspace.js';
import { usePki } from '../support/test-pki.js';
import { expectLocated, expectNoSecret, printedProblems } from './located-problems.js';
import { withinBound } from './mutations.js';

/**
 * Each input here is one the fuzz properties found, shrunk and written out, so the fault it showed
 * stays fixed whatever seed the properties run with. Bounds are ITERATION_LIMIT_MS, the properties'
 * own: before each fix the same input took many times longer, so the bound tells the two apart
 * on any machine, busy or not.
 */

const PASSWORD = 'Plant3d-Dev1ce-Pw';
const PEAP_PASSWORD = 'Plant3d-Peap-Pw';
const pki = usePki();

describe('inputs the fuzzing found', () => {
  it.each([
    ['a long word', 'y'.repeat(100_000)],
    ['a URL with a long run of colons', `"https://${':'.repeat(100_000)}"`],
  ])(
    'a problem on a line of %s: its source line is checked for URL credentials in linear time',
    async (_what, value) => {
      // The check for `scheme://user:pw@` tried every letter of a long word as the scheme's start,
      // each time running to the end of the line (and every colon as the end of the user name):
      // quadratic, 20 s and more for this one line, minutes at the 170 000 characters fuzzing wrote.
      const file = stickWithConfig(
        `version: 1\nmonitoring_points:\n  - name: mp1\n    url: https://192.0.2.10\n    bogus: ${value}\n`,
      );
      const validated = await withinBound('validateStick and printing', async () => {
        const result = await validateStick(file, { label: 'mpprov.yaml' });
        return { result, printed: printedProblems(result.problems, result) };
      });
      expect(validated.result.problems.map((p) => `${p.line}:${p.column} ${p.path}`)).toEqual([
        '5:5 monitoring_points[0].bogus',
      ]);
      expectLocated(validated.result.problems, 'mpprov.yaml', 6);
      // The line is shown (it holds no secret), so the check really ran over it.
      expect(validated.printed).toContain(`bogus: ${value.slice(0, 100)}`);
    },
  );

  it('a file of 4 000 aliases: each is checked for its anchor in one walk, and the count refuses the file', async () => {
    // Each alias's anchor was looked up by walking the whole document again: quadratic, 1.5 s
    // for the 2 000 lines fuzzing wrote, 6 s for these, all before the alias limit said no.
    const chain = Array.from(
      { length: 4000 },
      (_, i) => `a${i}: &a${i} [*a${Math.max(0, i - 1)}, *a${Math.max(0, i - 1)}]`,
    );
    const file = stickWithConfig(`${chain.join('\n')}\nversion: 1\n`);
    const validated = await withinBound('validateStick', () => validateStick(file, { label: 'mpprov.yaml' }));
    expect(validated.problems.map((p) => `${p.line}:${p.column} ${p.message}`)).toEqual([
      '51:12 the file uses more than 100 YAML aliases (*name)',
    ]);
    expectLocated(validated.problems, 'mpprov.yaml', 4002);
  });

  it('a YAML error after a stretch the parser could not read: placed on its own line, so a password there is withheld', async () => {
    // The profile with its first '#' gone and a value changed: the parser's line counter missed the
    // line breaks of the unreadable stretch, placed the error on the password's token at 4:108,
    // outside the password's span, and its message quoted the token: the password itself.
    const profile = readFileSync(join(profilesDir, 'acl.yaml'), 'utf8');
    const text = profile
      .slice(1)
      .replace('password_file: secrets/admin.pw', `password: "${PASSWORD}"`)
      .replace('monitoring_points:', 'monitoring_points: 0');
    const file = stickWithConfig(text);
    const validated = await validateStick(file, { label: 'mpprov.yaml' });
    const passwordLine = text.split('\n').findIndex((l) => l.includes(PASSWORD)) + 1;
    expect(passwordLine).toBe(8);
    expect(
      validated.problems
        .filter((p) => p.line === passwordLine)
        .map((p) => `${p.line}:${p.column} ${p.path} ${p.message}`),
    ).toEqual([
      '8:13  YAML syntax: Unexpected map-value-ind token in YAML stream',
      '8:14 password YAML reads part of this password as syntax, so it is not one text value',
    ]);
    expectLocated(validated.problems, 'mpprov.yaml', text.split('\n').length);
    expectNoSecret(printedProblems(validated.problems, validated), [PASSWORD]);
  });

  it('a key the parser made of a password and the next line: the key path shows no part of the password', async () => {
    // Text before a password's key and a line inserted above: error recovery read
    // 'Plant3d-Peap-Pw ca_cert' as a key, and the key path of a problem on the next line quoted it.
    const profile = readFileSync(join(profilesDir, 'vlan-dot1x.yaml'), 'utf8');
    const text = profile
      .replaceAll('password_file: secrets/mp01-peap.pw', `password: ${PEAP_PASSWORD}`)
      .replace('    interfaces:\n', '    interfaces:\n      "\\u0000"\n')
      .replace(`          password: ${PEAP_PASSWORD}`, `0x1F          password: ${PEAP_PASSWORD}`);
    const file = stickWithConfig(text);
    const validated = await validateStick(file, { label: 'mpprov.yaml' });
    expect(validated.problems.some((p) => p.path.includes('ca_cert'))).toBe(true);
    expectLocated(validated.problems, 'mpprov.yaml', text.split('\n').length);
    expectNoSecret(printedProblems(validated.problems, validated), [PEAP_PASSWORD]);
  });

  it('a password inside a collection used as a key: the unknown key is named without it', async () => {
    // `interfaces:` renamed to `? `: valid YAML whose next mapping is a key, stringified with the
    // inline 802.1X password inside; the unknown-key problem quoted it in its path and message.
    const profile = readFileSync(join(profilesDir, 'eap-md5.yaml'), 'utf8');
    const text = profile.replace('    interfaces:', '    ? ');
    const file = stickWithConfig(text);
    const validated = await validateStick(file, { label: 'mpprov.yaml' });
    expect(validated.problems.some((p) => p.message.startsWith('unknown key'))).toBe(true);
    expectLocated(validated.problems, 'mpprov.yaml', text.split('\n').length);
    expectNoSecret(printedProblems(validated.problems, validated), ['example-md5-password']);
  });

  it('a file the parser cannot recover from: the first 20 syntax errors, not one for every later token', async () => {
    // A flow map never closed, 3 000 deep: the parser reported 2 786 errors for this file (23 673
    // for the 30 KB fuzzing wrote, over 500 MB as printed with source lines and carets).
    const text = `version: 1\nmonitoring_points:\n  - name: ${'{a: '.repeat(3000)}\n  - x: [1, 2\n${'k: v\n'.repeat(2000)}`;
    const file = stickWithConfig(text);
    const validated = await withinBound('validateStick', () => validateStick(file, { label: 'mpprov.yaml' }));
    expect(validated.problems.length).toBeGreaterThan(0);
    expect(validated.problems.length).toBeLessThanOrEqual(20);
    expectLocated(validated.problems, 'mpprov.yaml', text.split('\n').length);
  });

  it('a YAML syntax error without a plain sentence of ours still has a hint', async () => {
    // The parser's own wording ('Plain value cannot start with reserved character @') came with no hint.
    const text = 'version: 1\nmonitoring_points:\n  - name: @mp1\n';
    const validated = await validateStick(stickWithConfig(text), { label: 'mpprov.yaml' });
    expect(validated.problems.map((p) => `${p.line}:${p.column} ${p.message} (${p.hint})`)).toEqual([
      '3:11 YAML syntax: Plain value cannot start with reserved character @ (check this line and the one before it for a missing quote, bracket or ":", and for indentation)',
    ]);
  });

  it('a client certificate whose notAfter holds a NUL byte: a located problem, not a RangeError', async () => {
    // OpenSSL still parses the certificate; its validTo is no date, and new Date(...).toISOString() threw.
    const ca = pki.ca('ca', 'Fuzz Root CA');
    pki.issue('client', 'client.fuzz.test', ca, 'client');
    const der = pki.openssl(['x509', '-in', 'client.pem', '-outform', 'DER']);
    // The second UTCTime (tag 0x17, 13 bytes) is notAfter; a NUL in place of its minutes' first digit.
    const first = der.indexOf(Buffer.from([0x17, 0x0d]));
    const second = der.indexOf(Buffer.from([0x17, 0x0d]), first + 2);
    expect(first).toBeGreaterThan(0);
    expect(second).toBeGreaterThan(first);
    der[second + 2 + 8] = 0;
    const file = stickWithConfig(
      'version: 1\nmonitoring_points:\n  - name: mp1\n    url: https://192.0.2.10\n    interfaces:\n      eth1:\n        ipv4: { method: dhcp }\n' +
        '        dot1x: { eap: tls, identity: client.fuzz.test, ca_cert: certs/ca.pem, client_cert: certs/client.der, private_key: certs/client.key }\n',
    );
    writeFileSync(join(dirname(file), 'certs/ca.pem'), pki.read('ca.pem'));
    writeFileSync(join(dirname(file), 'certs/client.key'), pki.read('client.key'));
    writeFileSync(join(dirname(file), 'certs/client.der'), der);
    const validated = await validateStick(file, { label: 'mpprov.yaml' });
    expect(validated.problems.map((p) => `${p.line}:${p.column} ${p.path} ${p.message}`)).toEqual([
      '8:92 monitoring_points[0].interfaces.eth1.dot1x.client_cert certs/client.der has validity dates that cannot be read; it may be damaged',
      // The changed byte breaks the CA's signature too.
      '8:92 monitoring_points[0].interfaces.eth1.dot1x.client_cert certs/client.der was not issued by the CA in ca_cert (certs/ca.pem)',
    ]);
  });
});
