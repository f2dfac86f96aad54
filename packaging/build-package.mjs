#!/usr/bin/env node
// `npm run package` (after `npm run build`): the bundled CLI dist/mpprov.cjs (launcher,
// mpprov-app.cjs and mpprov-apply.cjs), then the Debian package dist/mpprov_VERSION_all.deb
// built from it with dpkg-deb. No network, no fpm.
//
//   node packaging/build-package.mjs [--bundle-only] [--out DIR]
//
// --bundle-only stops after dist/mpprov.cjs (the test setup's second CLI run uses it); --out DIR
// writes the bundle, the staging folder and the .deb there instead of dist/ (the package test
// builds into its own folder, never under the feet of tests that run dist/).
import { execFileSync } from 'node:child_process';
import { mkdir, readFile } from 'node:fs/promises';
import { fileURLToPath } from 'node:url';
import { join, resolve } from 'node:path';
import { bundleCli } from './bundle.mjs';
import { buildDeb } from './deb.mjs';

const repo = fileURLToPath(new URL('..', import.meta.url));
const args = process.argv.slice(2);
let bundleOnly = false;
let out = join(repo, 'dist');
for (let i = 0; i < args.length; i++) {
  if (args[i] === '--bundle-only') bundleOnly = true;
  else if (args[i] === '--out' && args[i + 1] !== undefined) out = resolve(args[++i]);
  else {
    process.stderr.write(`build-package: unknown argument ${args[i]} (--bundle-only, --out DIR)\n`);
    process.exit(64);
  }
}

const { version } = JSON.parse(await readFile(join(repo, 'package.json'), 'utf8'));
await mkdir(out, { recursive: true });
const bundle = join(out, 'mpprov.cjs');
const metafile = await bundleCli({ repo, outfile: bundle, version });
// The bundle must run on its own before anything is built from it.
const reported = execFileSync(process.execPath, [bundle, '--version'], { encoding: 'utf8' }).trim();
if (reported !== version) throw new Error(`dist/mpprov.cjs --version printed "${reported}", expected ${version}`);
process.stdout.write(`build-package: ${bundle} (mpprov ${version})\n`);

if (!bundleOnly) {
  const deb = await buildDeb({ repo, out, bundle, version, metafile });
  process.stdout.write(`build-package: ${deb}\n`);
}
