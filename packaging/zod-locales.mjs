// zod's error messages in 50 languages, 296 KiB of a 2 MB bundle, reach the bundle only through
// `z.locales` (zod/v4/locales/index.js, re-exported by zod's classic and core index). mpprov
// writes every message in English and never picks a locale: zod registers English on its own
// (classic/schemas.js imports locales/en.js directly). In the bundle that index is a stand-in: `en`
// the real one, every other name a function that says it is not bundled. Less to read, hash and
// load from the code cache at every start; test/cli/zod-locales.test.ts holds the names to zod's.
import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';

const require = createRequire(import.meta.url);

/** zod's locales folder, as esbuild resolves `zod` from the repository. */
export function zodLocalesFolder() {
  return join(dirname(require.resolve('zod/package.json')), 'v4', 'locales');
}

/** The names zod's locales index exports (`export { default as xx } from "./xx.js";`), in its order. */
export function zodLocaleNames(folder = zodLocalesFolder()) {
  const index = readFileSync(join(folder, 'index.js'), 'utf8');
  return [...index.matchAll(/^export \{ default as (\w+) \} from "\.\/[\w-]+\.js";$/gm)].map((m) => m[1]);
}

/** The stand-in's source: English from zod, the other names throwing when called. */
export function localesStandIn(names) {
  if (!names.includes('en')) throw new Error("zod's locales index has no `en`: the stand-in needs updating");
  return [
    'export { default as en } from "./en.js";',
    'const notBundled = (name) => () => {',
    "  throw new Error(`zod's locale ${name} is not in mpprov's bundle (its messages are English)`);",
    '};',
    ...names
      .filter((name) => name !== 'en')
      .map((name) => `export const ${name} = notBundled(${JSON.stringify(name)});`),
  ].join('\n');
}

/** The esbuild plugin: zod's own imports of its locales index get the stand-in. */
export function zodLocalesPlugin() {
  const folder = zodLocalesFolder();
  const index = join(folder, 'index.js');
  return {
    name: 'mpprov-zod-locales',
    setup(build) {
      build.onResolve({ filter: /^\.\.\/locales\/index\.js$/ }, (args) =>
        join(args.resolveDir, args.path) === index ? { path: index, namespace: 'mpprov-zod-locales' } : undefined,
      );
      build.onLoad({ filter: /.*/, namespace: 'mpprov-zod-locales' }, () => {
        const names = zodLocaleNames(folder);
        // A zod that lists its locales another way would leave no names: build the real index instead of a wrong one.
        if (names.length < 10)
          throw new Error(`zod's ${index} lists ${names.length} locales: update packaging/zod-locales.mjs`);
        return { contents: localesStandIn(names), resolveDir: folder, loader: 'js' };
      });
    },
  };
}
