import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { loadAgentConfig, loadStick } from '../../src/config/index.js';
import { formatProblem } from '../../src/report/index.js';
import { runCli } from '../support/run-cli.js';
import { tempFolder } from '../support/temp-folder.js';

/**
 * A YAML alias with no anchor (`password: *Star-Secret`) made the YAML library throw from toJS: a
 * stack trace with the would-be password in its message. Each is a located problem now, in a stick
 * file and agent.yaml alike, and the name is quoted only where it cannot be a secret.
 */

const WOULD_BE_PASSWORD = 'Star-Secret';

const stickText = `version: 1
monitoring_points:
  - name: mp1
    url: https://192.0.2.10
    password: *${WOULD_BE_PASSWORD}
    tls: { fingerprint_sha256: "${'5E'.repeat(32)}" }
`;

const agentText = `version: 1
log_level: *x
monitoring_points: *nope
defaults:
  password: *${WOULD_BE_PASSWORD}
`;

describe('an alias without an anchor', () => {
  it('in a stick file: one located problem, the name not quoted under a secret key, on the terminal either', async () => {
    const dir = tempFolder('alias');
    writeFileSync(join(dir, 'mpprov.yaml'), stickText);
    const loaded = await loadStick(join(dir, 'mpprov.yaml'), { label: 'mpprov.yaml' });
    expect(loaded.problems.map((p) => `${p.line}:${p.column} ${p.path} ${p.message}`)).toEqual([
      '5:14 monitoring_points[0].password YAML reads part of this password as syntax, so it is not one text value',
    ]);
    const rendered = loaded.problems.map((p) => formatProblem(p, loaded)).join('\n');
    expect(rendered).not.toContain(WOULD_BE_PASSWORD);
  });

  it('in agent.yaml: each alias is a located problem; the one under password is not named', async () => {
    const dir = tempFolder('alias');
    writeFileSync(join(dir, 'agent.yaml'), agentText);
    const { problems } = await loadAgentConfig(join(dir, 'agent.yaml'));
    expect(
      problems.map((p) => ({ at: `${p.line}:${p.column}`, path: p.path, message: p.message, hint: p.hint })),
    ).toEqual([
      {
        at: '2:12',
        path: 'log_level',
        message: 'the alias *x refers to no anchor: no &x is set before it',
        hint: 'set the anchor first (key: &x value), write the value out, or quote a value that starts with *',
      },
      {
        at: '3:20',
        path: 'monitoring_points',
        message: 'the alias *nope refers to no anchor: no &nope is set before it',
        hint: 'set the anchor first (key: &nope value), write the value out, or quote a value that starts with *',
      },
      {
        at: '5:13',
        path: 'defaults.password',
        message:
          'this value starts with *, which YAML reads as an alias, and no anchor of that name is set before it (the name is not shown: a secret goes here)',
        hint: "if the value itself starts with *, put it in single quotes ('*...')",
      },
    ]);
    expect(JSON.stringify(problems)).not.toContain(WOULD_BE_PASSWORD);
  });

  it(
    'validate, plan and run end with exit 1 and problems, no stack trace and no would-be password',
    { timeout: 30_000 },
    async () => {
      const dir = tempFolder('alias');
      writeFileSync(join(dir, 'mpprov.yaml'), stickText);
      writeFileSync(join(dir, 'agent.yaml'), agentText);
      const runs = [
        await runCli(['validate', dir]),
        await runCli(['validate', dir, '--json']),
        await runCli(['plan', dir, '--agent-config', join(dir, 'agent.yaml')]),
        await runCli(['run', '--agent-config', join(dir, 'agent.yaml')]),
      ];
      expect(runs.map((r) => r.code)).toEqual([1, 1, 1, 1]);
      for (const run of runs) {
        const output = run.stdout + run.stderr;
        expect(output).not.toMatch(/ReferenceError|\n\s+at /);
        expect(output).not.toContain(WOULD_BE_PASSWORD);
      }
      expect(runs[2]?.stdout + (runs[2]?.stderr ?? '')).toContain(
        'agent.yaml:2:12  log_level  the alias *x refers to no anchor',
      );
    },
  );
});

describe('a collection used as a key', () => {
  it(
    'validate and plan print no Node warning quoting it, so a password inside it reaches no output',
    { timeout: 30_000 },
    async () => {
      // The YAML library warns through process.emitWarning, with the key as JSON, when it turns a
      // collection key into text: Node printed that on stderr, the password in it.
      const password = 'Keyed-Hunter2-SeCrEt';
      const dir = tempFolder('complex-key');
      writeFileSync(
        join(dir, 'mpprov.yaml'),
        `version: 1\n? { password: "${password}" }\n: x\nmonitoring_points: []\n`,
      );
      writeFileSync(join(dir, 'agent.yaml'), `? { password: "${password}" }\n: x\n`);
      const runs = [
        await runCli(['validate', dir]),
        await runCli(['validate', dir, '--json']),
        await runCli(['plan', dir, '--agent-config', join(dir, 'agent.yaml')]),
      ];
      expect(runs.map((r) => [r.code, r.stderr])).toEqual([
        [1, ''],
        [1, ''],
        [1, ''],
      ]);
      for (const run of runs) expect(run.stdout).not.toContain(password);
    },
  );
});

describe('secret values YAML would change without a word', () => {
  const head = `version: 1
monitoring_points:
  - name: mp1
    url: https://192.0.2.10
    tls: { fingerprint_sha256: "${'5E'.repeat(32)}" }
`;

  it("an unquoted password followed by ' #' gets a warning at the ' #', quoting nothing; a quoted one does not", async () => {
    const dir = tempFolder('comment');
    writeFileSync(join(dir, 'cut.yaml'), `${head}    password: Peap-Pass #42\n`);
    writeFileSync(join(dir, 'quoted.yaml'), `${head}    password: "Peap-Pass #42"  # the admin password\n`);
    const cut = await loadStick(join(dir, 'cut.yaml'), { label: 'cut.yaml' });
    expect(
      cut.problems.map((p) => ({
        at: `${p.line}:${p.column}`,
        severity: p.severity,
        path: p.path,
        message: p.message,
        hint: p.hint,
      })),
    ).toEqual([
      {
        at: '6:25',
        severity: 'warning',
        path: 'monitoring_points[0].password',
        message: "YAML treats ' #' as a comment, so this password ends before it",
        hint: "quote the value if ' #' is part of the password: password: '...'",
      },
    ]);
    expect(cut.problems.map((p) => formatProblem(p, cut)).join('\n')).not.toContain('Peap-Pass');
    expect((await loadStick(join(dir, 'quoted.yaml'))).problems).toEqual([]);
  });

  it('agent.yaml saved as Latin-1 is a located problem too', async () => {
    const dir = tempFolder('latin1');
    writeFileSync(
      join(dir, 'agent.yaml'),
      Buffer.concat([
        Buffer.from('version: 1\nstate_dir: /var/lib/mpprov-caf'),
        Buffer.from([0xe9]),
        Buffer.from('\n'),
      ]),
    );
    const { problems } = await loadAgentConfig(join(dir, 'agent.yaml'));
    expect(problems.map((p) => `${p.line}:${p.column} ${p.path} ${p.message}`)).toEqual([
      '2:31 state_dir this line holds a byte that is not UTF-8 text (was the file saved as Latin-1 or Windows-1252?)',
    ]);
  });
});
