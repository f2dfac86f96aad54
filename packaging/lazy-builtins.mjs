// Node's own modules that dependencies require when they load but use only on paths mpprov never
// takes: undici's HTTP/2 client (mpprov never allows h2) reads node:http2's constants at load time
// and calls connect only for an h2 connection; commander spawns a child only for an executable
// subcommand, which mpprov has none of; undici calls node:assert's function, and nothing else of
// it, on invariants that hold (155 calls in 33 files), so the module is needed only when one does
// not. Loading them costs every command about 6, 5 and 0.6 ms of CPU before its first line (CPU
// profiles of `mpprov apply`). In the bundle each importer gets a stand-in instead: the same
// constants, copied from this Node's own module when the bundle is built, and the functions, which
// load the real module on first use (assert: on the first failed invariant, which then throws the
// real AssertionError). Nothing changes in behaviour; test/cli/lazy-builtins.test.ts holds the
// constants to the real ones and the members used to those the stand-ins have.
import { constants as http2Constants } from 'node:http2';

/** What undici's client-h2.js destructures from node:http2's constants when it loads. */
export const HTTP2_CONSTANTS_USED = [
  'HTTP2_HEADER_AUTHORITY',
  'HTTP2_HEADER_METHOD',
  'HTTP2_HEADER_PATH',
  'HTTP2_HEADER_SCHEME',
  'HTTP2_HEADER_CONTENT_LENGTH',
  'HTTP2_HEADER_EXPECT',
  'HTTP2_HEADER_STATUS',
  'HTTP2_HEADER_PROTOCOL',
  'NGHTTP2_REFUSED_STREAM',
  'NGHTTP2_CANCEL',
];

/** The stand-ins, keyed by the builtin, each for the importers named (a file's path suffix, or a folder's path ending in /). */
export function standIns() {
  const constants = Object.fromEntries(HTTP2_CONSTANTS_USED.map((name) => [name, http2Constants[name]]));
  return [
    {
      builtin: 'node:http2',
      importer: 'node_modules/undici/lib/dispatcher/client-h2.js',
      contents: [
        "'use strict';",
        `exports.constants = Object.freeze(${JSON.stringify(constants)});`,
        "exports.connect = (...args) => require('node:http2').connect(...args);",
      ].join('\n'),
    },
    {
      builtin: 'node:assert',
      importer: 'node_modules/undici/lib/',
      contents: [
        "'use strict';",
        // Thrown here, not by calling the real assert: that would name its caller, the stand-in, as
        // the failed expression and start the stack there. As Node's own without a message when it
        // cannot read the source: `false == true`, the stack from undici's line that failed.
        'module.exports = function assert(value, message) {',
        '  if (value) return;',
        '  if (message instanceof Error) throw message;',
        "  const { AssertionError } = require('node:assert');",
        "  throw new AssertionError({ actual: value, expected: true, operator: '==', message, stackStartFn: assert });",
        '};',
      ].join('\n'),
    },
    {
      builtin: 'node:child_process',
      importer: 'node_modules/commander/lib/command.js',
      contents: ["'use strict';", "exports.spawn = (...args) => require('node:child_process').spawn(...args);"].join(
        '\n',
      ),
    },
  ];
}

/** The esbuild plugin that puts the stand-ins in place. */
export function lazyBuiltinsPlugin() {
  const entries = standIns();
  return {
    name: 'mpprov-lazy-builtins',
    setup(build) {
      build.onResolve({ filter: /^node:(http2|child_process|assert)$/ }, (args) => {
        const importer = args.importer.replaceAll('\\', '/');
        const entry = entries.find(
          (e) =>
            e.builtin === args.path &&
            (e.importer.endsWith('/') ? importer.includes(`/${e.importer}`) : importer.endsWith(e.importer)),
        );
        return entry === undefined ? undefined : { path: entry.builtin, namespace: 'mpprov-lazy-builtin' };
      });
      build.onLoad({ filter: /.*/, namespace: 'mpprov-lazy-builtin' }, (args) => ({
        contents: entries.find((e) => e.builtin === args.path)?.contents,
        loader: 'js',
      }));
    },
  };
}
