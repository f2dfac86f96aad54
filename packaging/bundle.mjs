// The CLI as files for Node's own modules only: src/cli/main.ts and every dependency bundled by
// esbuild into mpprov-app.cjs (CommonJS), src/cli/apply-main.ts (plan and apply alone) into
// mpprov-apply.cjs, and mpprov.cjs, a small launcher that runs one of them with V8's code cache
// (src/cli/compile-cache.ts: compiling 4 MB is a third of a short command's time). The .deb
// installs the launcher as /usr/bin/mpprov and the bundles in /usr/lib/mpprov/; nothing needs
// node_modules beside them.
import { build } from 'esbuild';
import { createHash } from 'node:crypto';
import { chmod, readFile, writeFile } from 'node:fs/promises';
import { dirname, join } from 'node:path';
import { lazyBuiltinsPlugin } from './lazy-builtins.mjs';
import { zodLocalesPlugin } from './zod-locales.mjs';

/**
 * The bundles' file names, beside the launcher (dist/, install.sh) or in /usr/lib/mpprov (the
 * .deb): src/cli/bundle-files.ts's, which the launcher looks for. Each entry point is bundled whole.
 */
export const APP_FILES = { 'mpprov-app.cjs': 'src/cli/main.ts', 'mpprov-apply.cjs': 'src/cli/apply-main.ts' };

/**
 * Bundles the CLI into `outfile` (the launcher) and APP_FILES beside it, and returns esbuild's
 * metafile of mpprov-app.cjs (which packages went in: the copyright file lists them; the apply
 * bundle's are a part of them).
 * `version` is inlined as the `__MPPROV_VERSION__` literal that src/cli/package-version.ts
 * prefers to reading ../../package.json, which the bundle does not have.
 */
export async function bundleCli({ repo, outfile, version }) {
  const common = {
    bundle: true,
    platform: 'node',
    target: 'node20',
    tsconfig: join(repo, 'tsconfig.json'),
    legalComments: 'none',
    logLevel: 'warning',
  };
  const metafiles = [];
  for (const [name, entry] of Object.entries(APP_FILES))
    metafiles.push(
      await bundleApp({ common, entry: join(repo, entry), appFile: join(dirname(outfile), name), version }),
    );
  await stampBuild(Object.keys(APP_FILES).map((name) => join(dirname(outfile), name)));
  // CommonJS as well: an ES module entry costs every command Node's ESM loader and a module wrapper
  // for each of Node's modules it imports (`--version` 61 -> 56 ms here); as /usr/bin/mpprov, with
  // no extension and no package.json above it, Node runs it as CommonJS without trying both.
  await build({
    ...common,
    entryPoints: [join(repo, 'src/cli/bundle-launcher.ts')],
    outfile,
    format: 'cjs',
    define: { 'import.meta.url': '__launcherFileUrl' },
    banner: { js: "var __launcherFileUrl = require('node:url').pathToFileURL(__filename).href;" },
  });
  await writeFile(outfile, asciiOnly(await readFile(outfile, 'utf8')));
  await chmod(outfile, 0o755);
  return metafiles[0];
}

/** One entry point and every dependency as one CommonJS file, `appFile`; esbuild's metafile of it. */
async function bundleApp({ common, entry, appFile, version }) {
  const result = await build({
    ...common,
    entryPoints: [entry],
    outfile: appFile,
    format: 'cjs',
    // Whitespace and syntax only (5.0 -> 3.4 MB): less to read, hash and scan on every start (a
    // cold validate 5 ms less CPU). Identifiers keep their names: stack traces and error names
    // read as in the source, and nothing that reads a function's or class's name can change.
    // The launcher, 6 KB, stays as written.
    minifyWhitespace: true,
    minifySyntax: true,
    // CommonJS has no import.meta: the one use left (package-version.ts, behind the inlined
    // version) gets the file's URL from this banner's variable.
    define: { __MPPROV_VERSION__: JSON.stringify(version), 'import.meta.url': '__mpprovFileUrl' },
    // "use strict" first, where it is a directive (esbuild's own would come after the banner).
    banner: { js: "'use strict';\nvar __mpprovFileUrl = require('node:url').pathToFileURL(__filename).href;" },
    metafile: true,
    plugins: [lazyBuiltinsPlugin(), zodLocalesPlugin()],
  });
  // Run inside a function wrapper (compile-cache.ts), where a "#!" line is a syntax error: blanked.
  await writeFile(appFile, asciiOnly((await readFile(appFile, 'utf8')).replace(/^#![^\n]*/, '')));
  await chmod(appFile, 0o644);
  return result.metafile;
}

/**
 * The first line of every bundle of one build: `// mpprov-build ` and 16 hex digits, the same in
 * each (src/cli/bundle-build.ts reads it). The launcher runs mpprov-apply.cjs only beside a
 * mpprov-app.cjs of the same build: a bundle left from another version (copied over by hand, an
 * older dist/) would answer plan and apply with other code than every other command.
 */
export const BUILD_LINE_PREFIX = '// mpprov-build ';

/**
 * Writes the build's stamp into the first line of each of `files` (the blanked "#!" line, so line
 * numbers stay): a hash of their contents, so the same sources give the same bundles.
 */
async function stampBuild(files) {
  const contents = await Promise.all(files.map((file) => readFile(file, 'latin1')));
  const hash = createHash('sha256');
  for (const text of contents) hash.update(text);
  const line = `${BUILD_LINE_PREFIX}${hash.digest('hex').slice(0, 16)}`;
  await Promise.all(
    files.map((file, i) => {
      const text = contents[i] ?? '';
      return writeFile(file, text.startsWith('\n') ? `${line}${text}` : `${line}\n${text}`, 'latin1');
    }),
  );
}

/**
 * The bundle as pure ASCII. esbuild escapes non-ASCII characters in code but copies comments as
 * they are, and one curly apostrophe in a dependency's comment makes V8 hold the whole 4 MB source
 * as a two-byte string: 8 MiB of heap in every mpprov process (and compile-cache.ts reads it as latin1), the agent's included. Each such
 * character becomes its \uXXXX escape (per UTF-16 unit), inert in a comment and the same
 * character in a string or regular expression.
 */
export function asciiOnly(text) {
  return text.replace(/[\u0080-\uffff]/g, (c) => `\\u${c.charCodeAt(0).toString(16).padStart(4, '0')}`);
}
