#!/usr/bin/env node
import { existsSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { warmRootCertificateStore } from './warm-root-store.js';
import { runWithCompileCache } from './compile-cache.js';

/**
 * dist/mpprov.cjs, the command the package installs as /usr/bin/mpprov (packaging/bundle.mjs):
 * finds the bundled CLI, mpprov-app.cjs, beside it (dist/, install.sh's lib folder) or in
 * ../lib/mpprov/ (the .deb), and runs it with the code cache (compile-cache.ts).
 */
/** Commands whose first TLS connection comes soon after the start: Node's root store is built meanwhile. */
const CONNECTING_COMMANDS: readonly string[] = ['plan', 'apply', 'service'];
// First, before the bundle is read and compiled: the worker needs 50-60 ms, and the first
// connection comes about 100 ms after this.
if (CONNECTING_COMMANDS.includes(process.argv[2] ?? '')) warmRootCertificateStore();

const here = (relative: string): string => fileURLToPath(new URL(relative, import.meta.url));
const appFile = [here('./mpprov-app.cjs'), here('../lib/mpprov/mpprov-app.cjs')].find((file) => existsSync(file));
if (appFile === undefined) {
  process.stderr.write(
    `mpprov: mpprov-app.cjs is neither beside ${here('.')} nor in ../lib/mpprov/: reinstall mpprov\n`,
  );
  process.exit(1);
}
runWithCompileCache({ appFile, args: process.argv.slice(2), env: process.env, uid: process.geteuid?.() ?? -1 });
