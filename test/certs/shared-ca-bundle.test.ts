import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, beforeAll, describe, expect, it } from 'vitest';
import { runCli, startCli, type RunningProcess } from '../support/run-cli.js';
import { leakedForms } from '../support/secret-forms.js';
import { tempFolder } from '../support/temp-folder.js';
import { isoDay, usePki } from '../support/test-pki.js';

/**
 * One CA bundle named at many keys is judged once: its problems are said once, at its first
 * reference, with the other references counted; one file says at most 20 problems and counts the
 * rest; a file of thousands of certificates is read up to 1 000. And validate, checking big
 * files, still ends within 2 s of a SIGTERM, as the stop tests in test/cli demand of every run.
 */

const pki = usePki();
let soonCa = '';
beforeAll(() => {
  // Expires within the 30 days that earn a warning: every copy in a bundle is one warning.
  soonCa = readFileSync(pki.ca('soon-ca', 'Soon CA', { algorithm: 'p256', endDays: 10 }).cert, 'latin1');
});

const PASSWORD = (i: number): string => `Bundle-Admin-Secret-${i}`;

/** A stick whose `points` devices each trust `caFile(i)`, with the files written beside it. */
function stick(points: number, caFile: (i: number) => string, files: Record<string, string>): string {
  const dir = join(tempFolder('shared-bundle'), 'stick');
  mkdirSync(dir);
  const lines = ['version: 1', 'monitoring_points:'];
  for (let i = 0; i < points; i++)
    lines.push(
      `  - name: mp${i}`,
      `    url: https://10.0.${Math.floor(i / 250)}.${(i % 250) + 1}`,
      `    password: ${PASSWORD(i)}`,
      `    tls: { ca: ${caFile(i)} }`,
    );
  writeFileSync(join(dir, 'mpprov.yaml'), `${lines.join('\n')}\n`);
  for (const [name, text] of Object.entries(files)) writeFileSync(join(dir, name), text);
  return dir;
}

interface Report {
  valid: boolean;
  warnings: number;
  errors: number;
  problems: { severity: string; line: number; path: string; message: string }[];
}

describe('a CA bundle named at many keys', () => {
  it('is judged once: each problem once, with the other references counted', { timeout: 60_000 }, async () => {
    const secrets = Array.from({ length: 200 }, (_, i) => PASSWORD(i));
    const dir = stick(200, (i) => (i % 2 === 0 ? 'bundle.pem' : './bundle.pem'), { 'bundle.pem': soonCa.repeat(500) });
    const expires = isoDay(pki.date(10));

    const json = await runCli(['validate', '--json', dir]);
    const report = JSON.parse(json.stdout) as Report;
    expect(report.valid).toBe(true);
    expect(report.problems).toHaveLength(21);
    expect(new Set(report.problems.map((p) => `${p.line} ${p.path}`))).toEqual(
      new Set(['6 monitoring_points[0].tls.ca']),
    );
    const also = ' (also named at monitoring_points[1].tls.ca and 198 other places)';
    expect(report.problems[0]?.message).toMatch(
      new RegExp(`^certificate 1 \\("Soon CA"\\) in bundle\\.pem expires on ${expires}, in \\d+ days`),
    );
    expect(report.problems[0]?.message.endsWith(also)).toBe(true);
    expect(report.problems[19]?.message).toMatch(/^certificate 20 \("Soon CA"\) in bundle\.pem expires on /);
    expect(report.problems[20]?.message).toBe(
      `and 480 more problems in this file (0 errors, 480 warnings), not listed one by one${also}`,
    );
    expect(report.warnings).toBe(21);
    expect(leakedForms(json.stdout + json.stderr, secrets)).toEqual([]);

    const text = await runCli(['validate', dir]);
    const lines = text.stdout.trimEnd().split('\n');
    // 21 problems, one line each off a terminal, and the verdict.
    expect(lines).toHaveLength(22);
    expect(lines.at(-1)).toMatch(/: valid \(0 errors, 21 warnings\)$/);
    expect(leakedForms(text.stdout + text.stderr, secrets)).toEqual([]);
  });

  it('reads at most 1000 certificates of one file, and says so where it is named', { timeout: 60_000 }, async () => {
    const dir = stick(2, () => 'huge.pem', { 'huge.pem': soonCa.repeat(1001) });
    const json = await runCli(['validate', '--json', dir]);
    const report = JSON.parse(json.stdout) as Report;
    expect(report.valid).toBe(false);
    expect(report.problems.filter((p) => p.severity === 'error')).toEqual([
      {
        severity: 'error',
        file: `${dir}/mpprov.yaml`,
        line: 6,
        column: 16,
        path: 'monitoring_points[0].tls.ca',
        message:
          'huge.pem holds more than 1000 certificates, more than any CA bundle needs; only the first 1000 were checked (also named at monitoring_points[1].tls.ca)',
        hint: 'name a file with only the certificates this key needs',
      },
    ]);
    // That error, 19 of the 1000 expiry warnings, and one problem that counts the other 981.
    expect(report.problems).toHaveLength(21);
    expect(report.problems.at(-1)?.message).toBe(
      'and 981 more problems in this file (0 errors, 981 warnings), not listed one by one (also named at monitoring_points[1].tls.ca)',
    );
  });
});

describe('a CA bundle named by many 802.1X blocks, each with its own client certificate', () => {
  it('is judged once, though the blocks differ', { timeout: 60_000 }, async () => {
    const ca = pki.ca('radius-ca', 'Radius CA', { algorithm: 'p256' });
    const client = pki.issue('client', 'mp-client', ca, 'client', { algorithm: 'p256' });
    const dir = join(tempFolder('shared-ca-cert'), 'stick');
    mkdirSync(dir);
    const lines = ['version: 1', 'monitoring_points:'];
    for (let i = 0; i < 30; i++) {
      lines.push(
        `  - name: mp${i}`,
        `    url: https://10.0.0.${i + 1}`,
        `    password: ${PASSWORD(i)}`,
        '    tls: { insecure: true }',
        '    interfaces:',
        '      eth1:',
        '        ipv4: { method: dhcp }',
        `        dot1x: { eap: tls, identity: mp${i}, ca_cert: bundle.pem, client_cert: c${i}.pem, private_key: k${i}.pem }`,
      );
      // Distinct files of the same content: each block is a set of its own.
      writeFileSync(join(dir, `c${i}.pem`), readFileSync(client.cert));
      writeFileSync(join(dir, `k${i}.pem`), readFileSync(client.key));
    }
    writeFileSync(join(dir, 'mpprov.yaml'), `${lines.join('\n')}\n`);
    writeFileSync(join(dir, 'bundle.pem'), soonCa.repeat(500));

    const json = await runCli(['validate', '--json', dir]);
    const report = JSON.parse(json.stdout) as Report;
    const atCa = report.problems.filter((p) => p.path.endsWith('.ca_cert'));
    expect(atCa).toHaveLength(21);
    expect(new Set(atCa.map((p) => p.path))).toEqual(new Set(['monitoring_points[0].interfaces.eth1.dot1x.ca_cert']));
    expect(atCa[0]?.message).toMatch(
      /^certificate 1 \("Soon CA"\) in bundle\.pem expires on .* \(also named at monitoring_points\[1\]\.interfaces\.eth1\.dot1x\.ca_cert and 28 other places\)$/,
    );
    expect(leakedForms(json.stdout + json.stderr, [PASSWORD(0)])).toEqual([]);
  });
});

describe('a SIGTERM while validate checks big files', () => {
  const running: RunningProcess[] = [];
  afterEach(async () => {
    for (const p of running.splice(0)) await p.stop('SIGKILL');
  });

  /** CPU seconds the process has used, from /proc: past start-up, it is checking certificates. */
  const cpuSeconds = (pid: number | undefined): number => {
    try {
      const fields = readFileSync(`/proc/${pid}/stat`, 'latin1').split(') ')[1]?.split(' ') ?? [];
      return (Number(fields[11]) + Number(fields[12])) / 100;
    } catch {
      return 0;
    }
  };

  it('ends the process within 2 s, saying where it was, with nothing on stdout', { timeout: 60_000 }, async () => {
    // Forty distinct files of 1000 certificates (each judged on its own), each named five times:
    // seconds of checking on Node 20, still more than a second on Node 24, whose OpenSSL is faster.
    const files: Record<string, string> = {};
    for (let f = 0; f < 40; f++) files[`bundle${f}.pem`] = `${soonCa.repeat(1000)}\n# copy ${f}\n`;
    const dir = stick(200, (i) => `bundle${i % 40}.pem`, files);
    const proc = startCli(['validate', dir]);
    running.push(proc);
    const end = Date.now() + 30_000;
    // Past start-up (about 0.2 s of CPU): checking certificates.
    while (cpuSeconds(proc.child.pid) < 0.6) {
      if (Date.now() > end || proc.child.exitCode !== null)
        throw new Error(`waiting for validate to check; output so far:\n${proc.output()}`);
      await new Promise((r) => setTimeout(r, 10));
    }
    const sent = performance.now();
    proc.child.kill('SIGTERM');
    const exit = await Promise.race([proc.exited, new Promise<'hung'>((r) => setTimeout(() => r('hung'), 10_000))]);
    expect(exit, proc.output()).not.toBe('hung');
    expect(performance.now() - sent, proc.output()).toBeLessThan(2_000);
    expect(exit).toEqual({ code: 143, signal: null });
    expect(proc.stderr().trim()).toBe(
      `stopped by SIGTERM: while checking ${dir}; validate sends nothing to any device`,
    );
    expect(proc.stdout()).toBe('');
  });
});
