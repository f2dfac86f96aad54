import { readFileSync } from 'node:fs';

/**
 * Replaced by the bundler (packaging/bundle.mjs, esbuild `define`) with the version as a string
 * literal: dist/mpprov.cjs has no package.json beside it. Undeclared when running from dist/cli/,
 * where `typeof` of it is "undefined" (never a ReferenceError).
 */
declare const __MPPROV_VERSION__: string | undefined;

/** The agent's version: inlined in the bundle, else from package.json (dist/cli/ and src/cli/ both sit two levels below it). */
export function packageVersion(): string {
  if (typeof __MPPROV_VERSION__ === 'string') return __MPPROV_VERSION__;
  const text = readFileSync(new URL('../../package.json', import.meta.url), 'utf8');
  return (JSON.parse(text) as { version: string }).version;
}
