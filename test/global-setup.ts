import { execFileSync } from 'node:child_process';
import { chmodSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import type { TestProject } from 'vitest/node';

/**
 * Builds as `npm run build` does, tsc's dist/ and the bundle dist/mpprov.cjs (launcher and mpprov-app.cjs, the
 * command package.json's bin names), once so tests can run the real `mpprov` as a child process, and makes the one folder the run's temporary files live in
 * (test/support/temp-folder.ts), removed afterwards.
 */
export default function setup(project: TestProject): () => void {
  // For a quick run of tests that do not spawn the CLI while dist/ is already fresh.
  if (process.env.MPPROV_TEST_NO_BUILD !== '1') {
    const repo = fileURLToPath(new URL('..', import.meta.url));
    execFileSync(process.execPath, [`${repo}node_modules/typescript/bin/tsc`, '-p', 'tsconfig.build.json'], {
      cwd: repo,
      stdio: 'inherit',
    });
    // The bundle (a second): what test/support/run-cli.ts runs.
    execFileSync(process.execPath, [`${repo}packaging/build-package.mjs`, '--bundle-only'], {
      cwd: repo,
      stdio: 'inherit',
    });
  }
  const root = mkdtempSync(join(tmpdir(), 'mpprov-test-run-'));
  // Traversable by others (the folders inside stay 0700): one test runs a script as "nobody".
  chmodSync(root, 0o755);
  project.provide('tempRoot', root);
  // The bundle's code cache (src/cli/compile-cache.ts) in the run's folder, not root's /var/cache/mpprov:
  // every bundle test after the first of its command runs from the cache, as an installed mpprov does.
  process.env.MPPROV_COMPILE_CACHE ??= join(root, 'compile-cache');
  return () => rmSync(root, { recursive: true, force: true });
}
