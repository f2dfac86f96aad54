import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startFleet, type Fleet } from '../../src/simulator/index.js';
import { cliPath } from '../support/run-cli.js';
import { tempFolder } from '../support/temp-folder.js';
import { collectionDir, collectionsPath, requireTool, runTool, systemPython } from './ansible-run.js';

/**
 * The collection's own checks, as a collection's CI runs them: ansible-test's sanity tests that work
 * offline (validate-modules compares each module's documentation with its argument spec), the
 * pytest unit tests, and the integration target against two simulated MPs.
 */

const TIMEOUT = 300_000;
let fleet: Fleet;
let work: string;

beforeAll(async () => {
  requireTool('ansible-test', 'the collection test runs its sanity tests with it');
  requireTool('ansible-playbook', 'the collection test runs its integration target with it');
  fleet = await startFleet(2, { restartMs: 100, serviceRateLimit: false });
  work = tempFolder('ansible-checks');
});

afterAll(async () => {
  await fleet?.close();
});

describe('the mpprov.mpprov collection\'s own checks', () => {
  it('passes ansible-test sanity: validate-modules, pep8, yamllint, compile, import, pylint (offline)', async () => {
    const run = await runTool(join(collectionsPath, 'sanity-offline.sh'), ['validate-modules', 'pep8', 'yamllint', 'compile', 'import', 'pylint'], {
      cwd: work,
      env: { ...process.env, PYTHONDONTWRITEBYTECODE: '1' },
    });
    expect(run.code, run.stdout + run.stderr).toBe(0);
    expect(run.stdout.trim().split('\n').filter((line) => line.startsWith('sanity '))).toEqual([
      'sanity validate-modules: ok',
      'sanity pep8: ok',
      'sanity yamllint: ok',
      'sanity compile: ok',
      'sanity import: ok',
      'sanity pylint: ok',
    ]);
  }, TIMEOUT);

  it('validate-modules fails a module whose documentation and argument spec disagree', async () => {
    // The same script on a copy (the repository's integrations/ansible) whose documentation gives lock_wait another default.
    const copy = mkdtempSync(join(work, 'broken-'));
    await runTool('cp', ['-r', collectionsPath, copy], { cwd: work, env: process.env });
    const root = join(copy, 'ansible');
    await runTool('sed', ['-i', 's/    default: 600$/    default: 60/', join(root, 'ansible_collections/mpprov/mpprov/plugins/doc_fragments/engine.py')], {
      cwd: work,
      env: process.env,
    });
    const run = await runTool(join(root, 'sanity-offline.sh'), ['validate-modules'], { cwd: work, env: process.env });
    rmSync(copy, { recursive: true, force: true });
    expect(run.code).toBe(1);
    expect(run.stdout).toMatch(
      /plugins\/modules\/monitoring_point\.py:0:0: doc-default-does-not-match-spec: Argument 'lock_wait' in argument_spec defines default as \(600\.0\) but documentation defines default as \(60\.0\)/,
    );
  }, TIMEOUT);

  it('passes its pytest unit tests', async () => {
    const run = await runTool(
      systemPython,
      ['-m', 'pytest', '-q', '-p', 'no:cacheprovider', '--rootdir', join(collectionDir, 'tests/unit'), join(collectionDir, 'tests/unit')],
      { cwd: collectionsPath, env: { ...process.env, PYTHONDONTWRITEBYTECODE: '1' } },
    );
    expect(run.code, run.stdout + run.stderr).toBe(0);
    expect(run.stdout).toMatch(/^\d+ passed/m);
  }, TIMEOUT);

  it('passes its integration target against two simulated MPs', async () => {
    const manifest = join(work, 'manifest.json');
    writeFileSync(manifest, JSON.stringify(fleet.manifest), { mode: 0o600 });
    const mpprov = join(work, 'mpprov');
    writeFileSync(mpprov, `#!/bin/sh\nexec '${process.execPath}' '${cliPath}' "$@"\n`, { mode: 0o755 });
    const run = await runTool(join(collectionDir, 'tests/integration/targets/monitoring_point/runme.sh'), [], {
      cwd: work,
      env: {
        ...process.env,
        ANSIBLE_COLLECTIONS_PATH: collectionsPath,
        ANSIBLE_HOME: join(work, 'ansible-home'),
        ANSIBLE_NOCOLOR: '1',
        PYTHONDONTWRITEBYTECODE: '1',
        MPPROV_TEST_MANIFEST: manifest,
        MPPROV_EXECUTABLE: mpprov,
        MPPROV_TEST_DIR: work,
      },
    });
    expect(run.code, run.stdout + run.stderr).toBe(0);
    expect(run.stdout).toContain('All assertions passed');
    for (const sim of fleet.devices) expect(run.stdout + run.stderr).not.toContain(sim.password);
    expect(run.stdout + run.stderr).not.toContain('Target-Dot1x-Pw-73');
    expect(run.stdout + run.stderr).not.toContain('Wrong-Admin-Pw-19');
  }, TIMEOUT);
});
