import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { runCli } from '../support/run-cli.js';
import { tempFolder } from '../support/temp-folder.js';

/** `mpprov validate` on a stick that names paths: warned about, located, when no service can check them. */

const TOKEN = 'tok-Wombat-9034-never-shown';
const STICK = [
  'version: 1',
  'monitoring_points:',
  '  - name: mp1',
  '    url: https://192.0.2.10',
  '    paths:',
  '      - target: 192.0.2.80',
  '  - name: mp2',
  '    url: https://192.0.2.11',
  '  - name: mp3',
  '    url: https://192.0.2.12',
  '    paths:',
  '      - target: app.example.com',
  '        location: Datacenter Frankfurt',
  '',
].join('\n');

function folder(): string {
  const dir = tempFolder('validate-paths');
  writeFileSync(join(dir, 'mpprov.yaml'), STICK);
  writeFileSync(join(dir, 'service.token'), `${TOKEN}\n`);
  writeFileSync(join(dir, 'no-service.yaml'), 'version: 1\n');
  writeFileSync(
    join(dir, 'with-service.yaml'),
    `service:\n  url: https://service.example/api\n  token_file: ${dir}/service.token\n`,
  );
  return dir;
}

describe('mpprov validate with paths', () => {
  it('warns at each monitoring point that names paths when agent.yaml has no service block', async () => {
    const dir = folder();
    const result = await runCli(['validate', join(dir, 'mpprov.yaml'), '--agent-config', join(dir, 'no-service.yaml')]);
    expect(result.code).toBe(0);
    const warning = (line: number, index: number): string =>
      `${dir}/mpprov.yaml:${line}:5  monitoring_points[${index}].paths  warning: paths cannot be checked: no service configured  (add a service block to agent.yaml (url, token_file), or name it with --agent-config)`;
    expect(result.stdout.split('\n')).toEqual([
      warning(5, 0),
      warning(11, 2),
      `${dir}/mpprov.yaml: valid (0 errors, 2 warnings)`,
      '',
    ]);
  });

  it('says nothing of paths when a service is configured, and never shows its token', async () => {
    const dir = folder();
    const result = await runCli(['validate', join(dir, 'mpprov.yaml'), '--json'], {
      env: { MPPROV_AGENT_CONFIG: join(dir, 'with-service.yaml') },
    });
    expect(result.code).toBe(0);
    const report = JSON.parse(result.stdout) as { valid: boolean; warnings: number };
    expect(report).toMatchObject({ valid: true, warnings: 0 });
    expect(result.stdout + result.stderr).not.toContain(TOKEN);
  });
});
