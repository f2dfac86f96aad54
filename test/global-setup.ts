import { execFileSync } from 'node:child_process';
import { fileURLToPath } from 'node:url';

/** Builds dist/ once so tests can run the real `mpprov` binary as a child process. */
export default function setup(): void {
  // For a quick run of tests that do not spawn the CLI while dist/ is already fresh.
  if (process.env.MPPROV_TEST_NO_BUILD === '1') return;
  const root = fileURLToPath(new URL('..', import.meta.url));
  execFileSync(process.execPath, [`${root}node_modules/typescript/bin/tsc`, '-p', 'tsconfig.build.json'], {
    cwd: root,
    stdio: 'inherit',
  });
}
