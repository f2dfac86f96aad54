import { setFlagsFromString } from 'node:v8';

/**
 * V8 flags set for one step only, then put back to V8's defaults. Node compiles its own modules
 * (node:http, tls, zlib, crypto...) from a code cache embedded in its binary, and V8 takes a code
 * cache only under the flags it was made with: a flag left changed for the whole process cost
 * every short command 12-14 ms of CPU compiling those modules from source. V8 computes its flag
 * hash again after every change, so flags put back to their defaults, implications included
 * (`--liftoff-only` turns off both wasm tier-ups), give the embedded cache back; checked on
 * Node 20, 22 and 24 (test/core/v8-flags.test.ts).
 *
 * A flag given on node's own command line or in NODE_OPTIONS is the operator's: then nothing is
 * changed or put back.
 */
function withFlags<T>(set: readonly string[], restore: readonly string[], step: () => T): T {
  if (flagsSetByOperator([...set, ...restore], process.execArgv, process.env.NODE_OPTIONS)) return step();
  for (const flag of set) setFlagsFromString(flag);
  try {
    return step();
  } finally {
    for (const flag of restore) setFlagsFromString(flag);
  }
}

/** Whether node's command line or NODE_OPTIONS names one of `flags` (either way, `_` or `-`). */
export function flagsSetByOperator(
  flags: readonly string[],
  execArgv: readonly string[],
  nodeOptions: string | undefined,
): boolean {
  const name = (arg: string): string =>
    arg
      .replace(/^--(no-)?/, '')
      .replace(/=.*$/, '')
      .replaceAll('_', '-');
  const given = [...execArgv, ...(nodeOptions ?? '').split(/\s+/)].map(name);
  return flags.some((flag) => given.includes(name(flag)));
}

/**
 * Runs `step` with V8 checking the checksum of a code cache it reads and writing one into a cache
 * it makes. A release V8 does not checksum a cache it reads: a torn or damaged cache file crashed
 * every later run of its command (review: a zeroed 16 KiB block, single flipped bytes); with the
 * flag V8 refuses it and it is rewritten. Both the reading (the Script's compile) and the writing
 * (createCachedData) run under it: the flag is part of the hash a cache must match.
 */
export function withCodeCacheChecksum<T>(step: () => T): T {
  return withFlags(['--verify-snapshot-checksum'], ['--no-verify-snapshot-checksum'], step);
}

let llhttpCompiled = false;

/**
 * Runs `step`, the first connection's hand-over to undici, with WebAssembly compiled by V8's
 * baseline compiler only, eagerly. undici parses HTTP with llhttp compiled to WebAssembly when its
 * first HTTP/1.1 connection opens (connectH1, synchronously inside the connect callback); by
 * default V8 compiles each function lazily and later recompiles the hot ones with its optimizing
 * tier on a background thread, and a short command (a no-change `apply`) ends before that job
 * does and its exit waits for it, about 50 ms. Compiled eagerly under `--liftoff-only`, the module
 * has no tier-up at all, and stays so after the flags are back. The baseline code parses the few
 * KiB a device or the service sends fast enough.
 */
export function withLlhttpAtBaseline<T>(step: () => T): T {
  if (llhttpCompiled) return step();
  llhttpCompiled = true;
  return withFlags(
    // Spelt out: Node 24's V8 no longer applies --liftoff-only's implications when it is set at run time.
    ['--liftoff-only', '--no-wasm-tier-up', '--no-wasm-dynamic-tiering', '--no-wasm-lazy-compilation'],
    ['--no-liftoff-only', '--wasm-tier-up', '--wasm-dynamic-tiering', '--wasm-lazy-compilation'],
    step,
  );
}
