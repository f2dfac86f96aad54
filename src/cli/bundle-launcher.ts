#!/usr/bin/env node
import { existsSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { warmRootCertificateStore } from './warm-root-store.js';
import { runWithCompileCache } from './compile-cache.js';
import { APPLY_APP, APPLY_COMMANDS, FULL_APP } from './bundle-files.js';
import { sameBuild } from './bundle-build.js';

/**
 * dist/mpprov.cjs, the command the package installs as /usr/bin/mpprov (packaging/bundle.mjs):
 * finds the bundled CLI beside it (dist/, install.sh's lib folder) or in ../lib/mpprov/ (the
 * .deb), and runs it with the code cache (compile-cache.ts). `plan` and `apply` have a bundle of
 * their own, mpprov-apply.cjs (apply-main.ts); every other command line runs mpprov-app.cjs.
 */
/** Commands whose first TLS connection comes soon after the start: Node's root store is built meanwhile. */
const CONNECTING_COMMANDS: readonly string[] = ['plan', 'apply', 'service'];
// First, before the bundle is read and compiled: the worker needs 50-60 ms, and the first
// connection comes about 100 ms after this.
if (CONNECTING_COMMANDS.includes(process.argv[2] ?? '')) warmRootCertificateStore();

const here = (relative: string): string => fileURLToPath(new URL(relative, import.meta.url));
const fullApp = [here(`./${FULL_APP}`), here(`../lib/mpprov/${FULL_APP}`)].find((file) => existsSync(file));
// The apply bundle only from fullApp's folder and of its build: one left from another version (a
// hand copy over an install, an older dist/) would answer plan and apply with other code, and
// another --version, than every other command. mpprov-app.cjs runs plan and apply as well.
const applyApp =
  fullApp !== undefined && APPLY_COMMANDS.includes(process.argv[2] ?? '')
    ? join(dirname(fullApp), APPLY_APP)
    : undefined;
const appFile = fullApp !== undefined && applyApp !== undefined && sameBuild(fullApp, applyApp) ? applyApp : fullApp;
if (appFile === undefined) {
  process.stderr.write(`mpprov: ${FULL_APP} is neither beside ${here('.')} nor in ../lib/mpprov/: reinstall mpprov\n`);
  process.exit(1);
}
runWithCompileCache({ appFile, args: process.argv.slice(2), env: process.env, uid: process.geteuid?.() ?? -1 });
