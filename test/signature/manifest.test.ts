import { execFileSync } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { formatManifest, parseManifest } from '../../src/signature/manifest.js';

/** mpprov.sha256 read as hostile input: every line on its own, nothing quoted but checked paths. */
const HASH = 'a'.repeat(64);
const parse = (text: string | Buffer) => parseManifest(Buffer.isBuffer(text) ? text : Buffer.from(text, 'utf8'));
const only = (text: string | Buffer) => {
  const parsed = parse(text);
  expect(parsed.entries).toEqual([]);
  return parsed.problems.map((p) => `${p.line}:${p.column} ${p.message}`);
};

describe('mpprov.sha256 as sha256sum writes it', () => {
  it('reads what sha256sum prints, and formatManifest prints the same bytes', () => {
    const dir = mkdtempSync(join(tmpdir(), 'mpprov-manifest-'));
    try {
      writeFileSync(join(dir, 'mpprov.yaml'), 'version: 1\n');
      execFileSync('mkdir', ['-p', join(dir, 'certs')]);
      writeFileSync(join(dir, 'certs', 'ca.pem'), 'ca\n');
      const printed = execFileSync('sha256sum', ['mpprov.yaml', 'certs/ca.pem'], { cwd: dir });
      const parsed = parseManifest(printed);
      expect(parsed.problems).toEqual([]);
      expect(parsed.entries.map((e) => [e.path, e.line])).toEqual([
        ['mpprov.yaml', 1],
        ['certs/ca.pem', 2],
      ]);
      expect(formatManifest(parsed.entries).equals(printed)).toBe(true);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it('tolerates CRLF line ends, blank lines, ./ prefixes and the binary-mode " *" separator', () => {
    const parsed = parse(`${HASH}  mpprov.yaml\r\n\r\n${'b'.repeat(64)} *./certs/ca.pem\r\n`);
    expect(parsed.problems).toEqual([]);
    expect(parsed.entries).toEqual([
      { path: 'mpprov.yaml', sha256: HASH, line: 1 },
      { path: 'certs/ca.pem', sha256: 'b'.repeat(64), line: 3 },
    ]);
  });
});

describe('hostile lines', () => {
  it('refuses paths that leave the stick or mean something else elsewhere', () => {
    expect(
      only(
        [
          `${HASH}  ../../etc/shadow`,
          `${HASH}  certs/../../x`,
          `${HASH}  /etc/shadow`,
          `${HASH}  C:/Windows/x`,
          `${HASH}  certs\\ca.pem`,
          `${HASH}  certs//ca.pem`,
          `${HASH}  certs/`,
          `${HASH}  .`,
          `${HASH}  `,
        ].join('\n'),
      ),
    ).toEqual([
      "1:67 the path leaves the stick through '..'",
      "2:67 the path leaves the stick through '..'",
      '3:67 the path is absolute',
      '4:67 the path is absolute',
      '5:67 the path holds a backslash',
      "6:67 the path has an empty folder name ('//' or a trailing /)",
      "7:67 the path has an empty folder name ('//' or a trailing /)",
      "8:67 the path names the stick's root, not a file",
      '9:67 the path is empty',
    ]);
  });

  it('refuses broken hashes and formats', () => {
    expect(
      only(
        [
          `${'A'.repeat(64)}  upper.pem`,
          `${'a'.repeat(63)}  short.pem`,
          `${'g'.repeat(64)}  nothex.pem`,
          `${HASH} one-space.pem`,
          `SHA256 (bsd.pem) = ${HASH}`,
          `\\${HASH}  escaped\\nname`,
          '# a comment',
        ].join('\n'),
      ),
    ).toEqual([
      '1:1 the SHA-256 is not written in lower-case hex',
      '2:1 the line is not a SHA-256 and a path as sha256sum prints them',
      '3:1 the line is not a SHA-256 and a path as sha256sum prints them',
      '4:1 the line is not a SHA-256 and a path as sha256sum prints them',
      '5:1 the line is not a SHA-256 and a path as sha256sum prints them',
      '6:1 the line names a file with a backslash or line break (sha256sum escaped it)',
      '7:1 the line is not a SHA-256 and a path as sha256sum prints them',
    ]);
  });

  it('refuses NUL bytes, bytes that are not UTF-8, control and bidi characters', () => {
    const lines = [
      Buffer.from(`${HASH}  a\0b`),
      Buffer.concat([Buffer.from(`${HASH}  caf`), Buffer.from([0xe9]), Buffer.from('.pem')]),
      Buffer.from(`${HASH}  \u001b[31mred.pem`),
      Buffer.from(`${HASH}  evil\u202Emep.txt`),
      Buffer.from(`${HASH}  a.pem\r\r`),
    ];
    expect(only(Buffer.concat(lines.flatMap((l) => [l, Buffer.from('\n')])))).toEqual([
      '1:1 the line holds a NUL byte',
      '2:1 the line is not UTF-8 text',
      '3:67 the path holds control characters',
      '4:67 the path holds control characters',
      '5:67 the path holds control characters',
    ]);
  });

  it('refuses a file listed twice, also when only the letter case differs (one file on FAT)', () => {
    const parsed = parse(`${HASH}  certs/ca.pem\n${HASH}  ./certs/ca.pem\n${HASH}  certs/CA.pem\n`);
    expect(parsed.entries.map((e) => e.path)).toEqual(['certs/ca.pem']);
    expect(parsed.problems.map((p) => `${p.line}:${p.column} ${p.message}`)).toEqual([
      "2:67 'certs/ca.pem' is listed twice: lines 1 and 2",
      "3:67 'certs/CA.pem' is listed twice, letter case aside (a FAT stick does not tell 'certs/ca.pem' from it): lines 1 and 3",
    ]);
  });

  it('refuses listing the list, its signature, or what the agent writes on the stick', () => {
    expect(
      only(
        ['mpprov.sha256', 'MPPROV.SHA256.SIG', 'usb.log', 'mpprov-result.json'].map((n) => `${HASH}  ${n}`).join('\n'),
      ),
    ).toEqual([
      "1:67 'mpprov.sha256' cannot be listed: it is the list itself, its signature, or a file the agent writes on the stick",
      "2:67 'MPPROV.SHA256.SIG' cannot be listed: it is the list itself, its signature, or a file the agent writes on the stick",
      "3:67 'usb.log' cannot be listed: it is the list itself, its signature, or a file the agent writes on the stick",
      "4:67 'mpprov-result.json' cannot be listed: it is the list itself, its signature, or a file the agent writes on the stick",
    ]);
  });

  it('caps size and line count before looking at any line', () => {
    expect(only(Buffer.alloc(256 * 1024 + 1, 0x41))).toEqual(['1:1 the file is 262145 bytes; the limit is 256 KiB']);
    // Blank lines are skipped, but still counted.
    expect(only('\n'.repeat(200_000))).toEqual(['4097:1 the file has more than 4096 lines']);
    expect(parse(`${HASH}  a\n${'\n'.repeat(4095)}`).problems).toEqual([]);
    expect(only('')).toEqual(['1:1 the file lists no files']);
    expect(only('\n\n')).toEqual(['1:1 the file lists no files']);
  });

  it('never quotes a broken line: not its hash, not what follows', () => {
    const secret = 'Hunter2-SeCrEt-Value';
    const hostile = [
      `${secret}`,
      `${HASH.slice(0, 60)}${secret}`,
      `${HASH}  ${secret}\u0007`,
      `password: ${secret}`,
      `${HASH}  ../${secret}`,
    ].join('\n');
    const parsed = parse(hostile);
    expect(parsed.problems).toHaveLength(5);
    const text = JSON.stringify(parsed.problems);
    expect(text).not.toContain(secret);
    expect(text).not.toContain(HASH.slice(0, 16));
  });
});
