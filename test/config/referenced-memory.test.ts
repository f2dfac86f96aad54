import { randomBytes } from 'node:crypto';
import { linkSync, symlinkSync, truncateSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { loadStick } from '../../src/config/index.js';
import { runCli } from '../support/run-cli.js';
import { tempFolder } from '../support/temp-folder.js';

/**
 * A stick that names the same file over and over, or many large files: each file is read once per
 * job, whatever the spelling that names it, and what a stick makes the agent hold is bounded
 * (64 MiB), said at the reference that crosses the bound.
 */

const MiB = 1024 * 1024;

/** A 1 MiB-ish password file: base64 text, one line, no newline inside. */
function bigPassword(): string {
  return randomBytes(MiB)
    .toString('base64')
    .slice(0, MiB - 64);
}

function monitoringPoints(count: number, entry: (i: number) => string): string {
  const lines = ['version: 1', 'monitoring_points:'];
  for (let i = 0; i < count; i++)
    lines.push(`  - name: mp${i}`, `    url: https://192.0.2.${(i % 250) + 1}:${1000 + i}`, entry(i));
  return `${lines.join('\n')}\n`;
}

describe('files the configuration names, in memory', () => {
  it(
    'validate on a stick naming one 1 MiB password file 1 000 times stays far below the memory it took per reference',
    { timeout: 60_000 },
    async () => {
      const dir = tempFolder('memory-stick');
      writeFileSync(join(dir, 'big.pw'), bigPassword());
      const config = monitoringPoints(1000, () => '    password_file: big.pw');
      expect(config.length).toBeGreaterThan(64 * 1024);
      writeFileSync(join(dir, 'mpprov.yaml'), config);
      // The CLI's own peak resident set, reported by the process itself as it exits.
      const probe = join(dir, 'report-peak-rss.mjs');
      writeFileSync(
        probe,
        "process.on('exit', () => process.stderr.write(`peak-rss-kib=${process.resourceUsage().maxRSS}\\n`));\n",
      );
      const result = await runCli(['validate', join(dir, 'mpprov.yaml')], {
        env: { NODE_OPTIONS: `--import=${probe}` },
      });
      expect(result.stdout).toContain('valid (0 errors, 0 warnings)');
      const peak = /peak-rss-kib=(\d+)/.exec(result.stderr)?.[1];
      expect(peak, result.stderr).toBeDefined();
      // One read of the file, one Secret: some 150 MiB here; a read per reference took 1.15 GiB.
      expect(Number(peak) * 1024).toBeLessThan(300 * MiB);
    },
  );

  it('every spelling of one file (./name, a hard link, a folder link) gets the one read and the one Secret', async () => {
    const dir = tempFolder('one-read');
    writeFileSync(join(dir, 'admin.pw'), 'Same-File-Secret-1\n');
    linkSync(join(dir, 'admin.pw'), join(dir, 'copy.pw'));
    symlinkSync('.', join(dir, 'here'));
    const names = ['admin.pw', './admin.pw', 'copy.pw', 'here/admin.pw', 'admin.pw'];
    writeFileSync(
      join(dir, 'mpprov.yaml'),
      monitoringPoints(names.length, (i) => `    password_file: ${names[i]}\n    tls: { insecure: true }`),
    );
    const loaded = await loadStick(join(dir, 'mpprov.yaml'));
    expect(loaded.problems.filter((p) => p.severity === 'error')).toEqual([]);
    const passwords = loaded.model?.monitoring_points.map((mp) => mp.password) ?? [];
    expect(passwords).toHaveLength(5);
    expect(new Set(passwords).size).toBe(1);
    expect(loaded.secrets).toHaveLength(1);
  });

  it('certificate files past 64 MiB: a located problem at the reference that crosses the bound', async () => {
    const dir = tempFolder('held-bound');
    // Sparse 1 MiB files: read as zeros, so the bytes held are real while the disk holds nothing.
    for (let i = 0; i < 70; i++) {
      writeFileSync(join(dir, `ca${i}.pem`), '');
      truncateSync(join(dir, `ca${i}.pem`), MiB);
    }
    writeFileSync(
      join(dir, 'mpprov.yaml'),
      monitoringPoints(70, (i) => `    password: Some-Password-1\n    tls: { ca: ca${i}.pem }`),
    );
    const loaded = await loadStick(join(dir, 'mpprov.yaml'), { label: 'mpprov.yaml' });
    const bound = loaded.problems.filter((p) => p.message.includes('64 MiB'));
    expect(bound.map((p) => `${p.file}:${p.line}:${p.column} ${p.path}`)).toEqual(
      [64, 65, 66, 67, 68, 69].map((i) => `mpprov.yaml:${3 + i * 4 + 3}:16 monitoring_points[${i}].tls.ca`),
    );
    expect(bound[0]).toMatchObject({
      severity: 'error',
      message:
        "file 'ca64.pem' was not kept: with the files named before it, this configuration's files would take more than 64 MiB of memory",
      hint: 'name fewer or smaller files (naming the same file again costs nothing)',
    });
    expect(loaded.files.size).toBe(64);
  });

  it('a secret counts with the forms the redactor looks for: a few 1 MiB passwords reach the bound', async () => {
    const dir = tempFolder('secret-bound');
    for (let i = 0; i < 8; i++) writeFileSync(join(dir, `p${i}.pw`), bigPassword());
    writeFileSync(
      join(dir, 'mpprov.yaml'),
      monitoringPoints(8, (i) => `    password_file: p${i}.pw`),
    );
    const loaded = await loadStick(join(dir, 'mpprov.yaml'), { label: 'mpprov.yaml' });
    const bound = loaded.problems.filter((p) => p.message.includes('64 MiB'));
    expect(bound.length).toBeGreaterThan(0);
    expect(bound[0]?.message).toMatch(/^secret file 'p\d\.pw' was not kept: /);
    expect(bound[0]?.path).toMatch(/^monitoring_points\[\d\]\.password_file$/);
    expect(loaded.secrets.length).toBeLessThan(8);
  });
});
