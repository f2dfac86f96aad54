// The one-file CLI: src/cli/main.ts and every dependency bundled by esbuild into dist/mpprov.mjs,
// which the .deb installs as /usr/bin/mpprov and runs with the system's node. Nothing is left
// external but Node's own modules, so the file needs no node_modules beside it.
import { build } from 'esbuild';
import { chmod, readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';

/**
 * Bundles the CLI into `outfile` and returns esbuild's metafile (which packages went in: the
 * copyright file lists them). `version` is inlined as the `__MPPROV_VERSION__` literal that
 * src/cli/package-version.ts prefers to reading ../../package.json, which the bundle does not have.
 */
export async function bundleCli({ repo, outfile, version }) {
  const result = await build({
    entryPoints: [join(repo, 'src/cli/main.ts')],
    outfile,
    bundle: true,
    format: 'esm',
    platform: 'node',
    target: 'node20',
    tsconfig: join(repo, 'tsconfig.json'),
    define: { __MPPROV_VERSION__: JSON.stringify(version) },
    // CommonJS dependencies (winston, node-forge, undici's lazy requires) call require() for Node's
    // own modules; an ESM file has no require, so give it one. esbuild keeps main.ts's "#!" line
    // and puts it first, above this banner.
    banner: {
      js: [
        "import { createRequire as __mpprovCreateRequire } from 'node:module';",
        'const require = __mpprovCreateRequire(import.meta.url);',
      ].join('\n'),
    },
    legalComments: 'none',
    metafile: true,
    logLevel: 'warning',
  });
  await writeFile(outfile, asciiOnly(await readFile(outfile, 'utf8')));
  await chmod(outfile, 0o755);
  return result.metafile;
}

/**
 * The bundle as pure ASCII. esbuild escapes non-ASCII characters in code but copies comments as
 * they are, and one curly apostrophe in a dependency's comment makes V8 hold the whole 4 MB source
 * as a two-byte string: 8 MiB of heap in every mpprov process, the agent's included. Each such
 * character becomes its \uXXXX escape (per UTF-16 unit), inert in a comment and the same
 * character in a string or regular expression.
 */
export function asciiOnly(text) {
  return text.replace(/[^\x00-\x7f]/g, (c) => `\\u${c.charCodeAt(0).toString(16).padStart(4, '0')}`);
}
