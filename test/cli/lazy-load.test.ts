import { spawn } from 'node:child_process';
import { readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { repoRoot, type CliResult } from '../support/run-cli.js';
import { tempFolder } from '../support/temp-folder.js';
import { unreachablePlanStick } from './unreachable-plan-stick.js';

/**
 * A command loads only what it needs: every module the real `mpprov` process loaded, recorded by
 * a preloaded resolve hook (lazy-load-recorder.mjs), for a few command lines. Always tsc's
 * dist/cli/main.js, also in the bundle run: in the one-file bundle there are no modules to tell
 * apart (esbuild turns the lazy imports into deferred initialisers in the same file).
 */

const RECORDER = join(repoRoot, 'test/cli/lazy-load-recorder.mjs');
const MAIN = join(repoRoot, 'dist/cli/main.js');

interface Loaded extends CliResult {
  /** Every file: URL the process loaded, relative to the repository (`dist/certs/detect.js`, `node_modules/undici/index.js`). */
  modules: string[];
}

async function loadedBy(args: readonly string[], cwd = repoRoot): Promise<Loaded> {
  const log = join(tempFolder('lazy-load'), 'modules.txt');
  await writeFile(log, '');
  const result = await new Promise<CliResult>((resolve, reject) => {
    const child = spawn(process.execPath, ['--import', RECORDER, MAIN, ...args], {
      cwd,
      env: { ...process.env, NO_COLOR: '1', MPPROV_MODULE_LOG: log },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (chunk: Buffer) => (stdout += chunk.toString()));
    child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
    child.on('error', reject);
    child.on('close', (code, signal) => resolve({ code, signal, stdout, stderr }));
  });
  const urls = new Set((await readFile(log, 'utf8')).split('\n').filter((line) => line.startsWith('file:')));
  const modules = [...urls].map((url) => normalise(decodeURIComponent(new URL(url).pathname))).sort();
  return { ...result, modules };
}

/** node_modules is a link to another checkout here: name packages by their node_modules path wherever they sit. */
function normalise(path: string): string {
  const inPackages = path.lastIndexOf('/node_modules/');
  if (inPackages >= 0) return path.slice(inPackages + 1);
  return path.startsWith(repoRoot) ? path.slice(repoRoot.length) : path;
}

const packageLoaded = (modules: readonly string[], name: string) =>
  modules.some((m) => m.startsWith(`node_modules/${name}/`));
const folderLoaded = (modules: readonly string[], folder: string) =>
  modules.some((m) => m.startsWith(`dist/${folder}/`));

/** What validate, plan and apply never need: the agent, the simulator, their watchers and logger. */
function expectNoAgentOrSimulator(modules: readonly string[]): void {
  expect(folderLoaded(modules, 'simulator')).toBe(false);
  expect(folderLoaded(modules, 'agent')).toBe(false);
  expect(folderLoaded(modules, 'status-page')).toBe(false);
  expect(folderLoaded(modules, 'notify')).toBe(false);
  expect(packageLoaded(modules, 'chokidar')).toBe(false);
  expect(packageLoaded(modules, 'winston')).toBe(false);
}

describe('modules a command loads', () => {
  it('validate of a PEAP profile: the stick stages, and neither node-forge nor the device client, agent or simulator', async () => {
    const run = await loadedBy(['validate', 'profiles/peap-mschapv2.yaml']);
    expect(run).toMatchObject({ code: 0, stdout: 'profiles/peap-mschapv2.yaml: valid (0 errors, 0 warnings)\n' });
    // The recording sees what validate does need, or the absences below would prove nothing.
    expect(run.modules).toContain('dist/cli/validate-command.js');
    expect(run.modules).toContain('dist/certs/validate-stick.js');
    expect(packageLoaded(run.modules, 'yaml')).toBe(true);
    expect(packageLoaded(run.modules, 'zod')).toBe(true);
    expect(packageLoaded(run.modules, 'node-forge')).toBe(false);
    expect(packageLoaded(run.modules, 'undici')).toBe(false);
    expect(folderLoaded(run.modules, 'client')).toBe(false);
    expectNoAgentOrSimulator(run.modules);
    // Only validate's command module of dist/cli.
    expect(run.modules.filter((m) => m.startsWith('dist/cli/') && m.endsWith('-command.js'))).toEqual([
      'dist/cli/validate-command.js',
    ]);
  });

  it('validate of a PFX profile loads node-forge, and still no agent or simulator', async () => {
    const run = await loadedBy(['validate', 'profiles/eap-tls-pfx.yaml']);
    expect(run.code).toBe(0);
    expect(run.stdout).toMatch(/profiles\/eap-tls-pfx\.yaml: valid \(0 errors, 1 warning\)\n$/);
    expect(packageLoaded(run.modules, 'node-forge')).toBe(true);
    expect(packageLoaded(run.modules, 'undici')).toBe(false);
    expectNoAgentOrSimulator(run.modules);
  });

  it('plan loads the device client, and no agent or simulator, nor the service side without a service block', async () => {
    const { folder, config } = await unreachablePlanStick('lazy-load-plan');
    const run = await loadedBy(['plan', config], folder);
    expect(run.code).toBe(1);
    expect(run.stderr + run.stdout).toMatch(/127\.0\.0\.1:1/);
    expect(packageLoaded(run.modules, 'undici')).toBe(true);
    expect(run.modules).toContain('dist/client/admin-client.js');
    expect(run.modules).toContain('dist/apply/apply-stick.js');
    expectNoAgentOrSimulator(run.modules);
    expect(folderLoaded(run.modules, 'service')).toBe(false);
    expect(folderLoaded(run.modules, 'observe')).toBe(false);
  });

  it('--version loads no command at all', async () => {
    const run = await loadedBy(['--version']);
    expect(run.code).toBe(0);
    expect(run.modules).toContain('dist/cli/main.js');
    expect(run.modules.filter((m) => m.startsWith('dist/cli/') && m.endsWith('-command.js'))).toEqual([]);
    expect(packageLoaded(run.modules, 'zod')).toBe(false);
    expect(packageLoaded(run.modules, 'yaml')).toBe(false);
  });

  it('the help still lists every command', async () => {
    const run = await loadedBy(['--help']);
    expect(run.code).toBe(0);
    const commands = run.stdout.slice(run.stdout.indexOf('Commands:'));
    const listed = [...commands.matchAll(/^ {2}([a-z][a-z-]*)/gm)].map((m) => m[1]);
    expect(listed).toEqual([
      'validate',
      'plan',
      'apply',
      'preflight',
      'schema',
      'run',
      'status',
      'notify',
      'simulate',
      'sign',
      'stick',
      'secrets-record',
      'observe',
      'service',
      'help',
    ]);
  });
});
