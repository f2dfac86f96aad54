import { createRequire } from 'node:module';
import type forge from 'node-forge';

/**
 * node-forge, loaded the first time something needs it: a PFX, a PKCS#8 key in a legacy cipher,
 * a DER file to tell apart. A stick of PEM certificates and plain keys (PEAP, most EAP-TLS) never
 * loads it; that is ~40 modules `mpprov validate` does not compile.
 *
 * Synchronous, not `await import()`: the readers are synchronous all the way down (a key password
 * is revealed only inside Secret's synchronous decryptWith), and forge is CommonJS, which require()
 * loads synchronously. Two ways, for the two ways mpprov runs:
 * - the one-file bundle (esbuild): the free `require('node-forge')` below is resolved at build
 *   time, so forge is inside the file and its CommonJS wrapper first runs on this call;
 * - tsc's dist/ and the tests, plain ESM where `require` is not defined: createRequire.
 */
let loaded: typeof forge | undefined;

export function nodeForge(): typeof forge {
  if (loaded === undefined) {
    // A direct require('node-forge') call, not require kept in a variable: esbuild bundles only that form (see above).
    const forgeModule: unknown =
      // eslint-disable-next-line @typescript-eslint/no-require-imports
      typeof require === 'function' ? require('node-forge') : createRequire(import.meta.url)('node-forge');
    loaded = forgeModule as typeof forge;
  }
  return loaded;
}
