#!/usr/bin/env node
// `npm run package` (after `npm run build`): the one-file CLI dist/mpprov.mjs, then the Debian
// package dist/mpprov_VERSION_all.deb built from it with dpkg-deb. No network, no fpm.
//
//   node packaging/build-package.mjs [--bundle-only]
//
// --bundle-only stops after dist/mpprov.mjs (the test setup's second CLI run uses it).
import { execFileSync } from 'node:child_process';
import { readFile } from 'node:fs/promises';
import { fileURLToPath } from 'node:url';
import { join } from 'node:path';
import { bundleCli } from './bundle.mjs';
import { buildDeb } from './deb.mjs';

const repo = fileURLToPath(new URL('..', import.meta.url));
const args = process.argv.slice(2);
const unknown = args.filter((a) => a !== '--bundle-only');
if (unknown.length > 0) {
  process.stderr.write(`build-package: unknown argument ${unknown[0]} (only --bundle-only)\n`);
  process.exit(64);
}

const { version } = JSON.parse(await readFile(join(repo, 'package.json'), 'utf8'));
const bundle = join(repo, 'dist/mpprov.mjs');
const metafile = await bundleCli({ repo, outfile: bundle, version });
// The bundle must run on its own before anything is built from it.
const reported = execFileSync(process.execPath, [bundle, '--version'], { encoding: 'utf8' }).trim();
if (reported !== version) throw new Error(`dist/mpprov.mjs --version printed "${reported}", expected ${version}`);
process.stdout.write(`build-package: ${bundle} (mpprov ${version})\n`);

if (!args.includes('--bundle-only')) {
  const deb = await buildDeb({ repo, bundle, version, metafile });
  process.stdout.write(`build-package: ${deb}\n`);
}
