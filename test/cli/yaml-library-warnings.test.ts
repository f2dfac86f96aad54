import { mkdirSync, mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { runCli, type CliResult } from '../support/run-cli.js';

/**
 * The yaml library turns a mapping used as a key (`? {password: ...}: x`) into text when it builds
 * plain objects, and tells process.emitWarning so, quoting the key whole: on stderr, beside
 * mpprov's own report that withholds the same secret. Every YAML mpprov reads from a stick, the
 * laptop or a build is parsed with the library's warnings off; mpprov reports the key itself.
 */
const SECRET = 'Sq7-collection-key-secret';
const COLLECTION_KEY = `? { password: ${SECRET} }\n    : x\n`;

function stick(dir: string): string {
  const file = join(dir, 'mpprov.yaml');
  writeFileSync(
    file,
    `version: 1\nmonitoring_points:\n  - name: mp1\n    url: https://127.0.0.1:9\n    ${COLLECTION_KEY}`,
    { mode: 0o600 },
  );
  return file;
}

function expectQuiet(result: CliResult): void {
  const output = result.stdout + result.stderr;
  expect(output).not.toContain(SECRET);
  expect(result.stderr).not.toMatch(/Warning:|stringified/);
}

describe('YAML with a mapping as a key', () => {
  it('validate and plan report the key without the yaml library printing it, secret and all', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'mpprov-yaml-key-'));
    const file = stick(dir);
    for (const command of ['validate', 'plan']) {
      const result = await runCli([command, file]);
      expect(result.code, command).not.toBe(0);
      expect(result.stdout + result.stderr).toMatch(/unknown key/);
      expectQuiet(result);
    }
  });

  it("the laptop's agent.yaml with such a key is refused just as quietly", async () => {
    const dir = mkdtempSync(join(tmpdir(), 'mpprov-yaml-key-'));
    const agentConfig = join(dir, 'agent.yaml');
    writeFileSync(agentConfig, `version: 1\n${COLLECTION_KEY.replace(/^ {4}/m, '')}`, { mode: 0o600 });
    const result = await runCli(['validate', stick(dir)], { env: { MPPROV_AGENT_CONFIG: agentConfig } });
    expect(result.code).not.toBe(0);
    expectQuiet(result);
  });

  it('stick diff of a build whose mpprov.yaml holds such a key', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'mpprov-yaml-key-'));
    const [before, after] = [join(dir, 'before'), join(dir, 'after')];
    mkdirSync(join(before, 'paris'), { recursive: true });
    mkdirSync(join(after, 'paris'), { recursive: true });
    writeFileSync(
      join(before, 'paris', 'mpprov.yaml'),
      'version: 1\nmonitoring_points:\n  - name: mp1\n    url: https://127.0.0.1:9\n',
    );
    stick(join(after, 'paris'));
    const result = await runCli(['stick', 'diff', before, after]);
    expectQuiet(result);
  });
});
