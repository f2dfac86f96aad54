import { cpSync, readdirSync, readFileSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { repoRoot } from '../support/run-cli.js';
import { tempFolder } from '../support/temp-folder.js';

/** test/fixtures/stick-build: the example fleet's template, inventory, CA file and secrets. */
export const FIXTURES = join(repoRoot, 'test/fixtures/stick-build');

/** Every secret of the fixtures' secrets folder: an output holding one leaked it. */
export function fixtureSecrets(dir = join(FIXTURES, 'secrets')): string[] {
  return readdirSync(dir).map((name) => readFileSync(join(dir, name), 'utf8').trim());
}

/** A copy of the fixtures to change, and a fresh --out folder name beside it. */
export function fixtureCopy(name: string): { dir: string; out: (n?: string) => string } {
  const dir = tempFolder(name);
  cpSync(FIXTURES, dir, { recursive: true });
  let count = 0;
  return { dir, out: (n = 'out') => join(dir, `${n}-${(count += 1)}`) };
}

/** Every regular file under `root` with its bytes, by path with '/'. */
export function filesUnder(root: string, rel = ''): Map<string, Buffer> {
  const files = new Map<string, Buffer>();
  for (const entry of readdirSync(join(root, rel), { withFileTypes: true })) {
    const path = rel === '' ? entry.name : `${rel}/${entry.name}`;
    if (entry.isDirectory()) for (const [p, b] of filesUnder(root, path)) files.set(p, b);
    else if (entry.isFile()) files.set(path, readFileSync(join(root, path)));
  }
  return files;
}

export function modeOf(file: string): number {
  return statSync(file).mode & 0o777;
}
