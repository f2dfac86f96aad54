import { execFileSync } from 'node:child_process';
import { chmodSync, cpSync, mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { cliEntry, repoRoot } from './run-cli.js';
import { tempFolder } from './temp-folder.js';

/**
 * A copy of the built CLI (dist/, package.json, node_modules) that an unprivileged user can load,
 * wherever the checkout lives: a clone under a 0700 folder (a `mktemp -d`) cannot be entered by
 * "nobody", so running the repository's own dist/ as that user fails before mpprov starts. The
 * copy sits under the run's temp root, which global setup makes traversable. node_modules is
 * hard-linked where the filesystem allows it (cheap), else copied.
 */
export function worldReadableCli(): string {
  const root = tempFolder('cli-copy');
  chmodSync(root, 0o755);
  cpSync(join(repoRoot, 'dist'), join(root, 'dist'), { recursive: true });
  cpSync(join(repoRoot, 'package.json'), join(root, 'package.json'));
  mkdirSync(join(root, 'node_modules'));
  try {
    execFileSync('cp', ['-al', `${join(repoRoot, 'node_modules')}/.`, join(root, 'node_modules')], { stdio: 'ignore' });
  } catch {
    cpSync(join(repoRoot, 'node_modules'), join(root, 'node_modules'), { recursive: true, dereference: true });
  }
  // Folders made by the copy follow the umask; files keep the checkout's modes. Make both readable.
  execFileSync('chmod', ['-R', 'a+rX', root]);
  return join(root, cliEntry);
}
