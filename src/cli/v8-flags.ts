import { setFlagsFromString } from 'node:v8';

/**
 * Imported first by main.ts, before any module that loads undici. undici parses HTTP with llhttp
 * compiled to WebAssembly, and V8 then recompiles that module with its optimizing tier on a
 * background thread; a short command (a no-change `apply` takes about 350 ms) ends before that job
 * does and its exit waits for it, about 50 ms (bench: no-change re-apply, median of 12, 353 -> 306
 * ms). The baseline tier alone parses the few KiB a device or the service sends fast enough.
 */
setFlagsFromString('--liftoff-only');

/**
 * The launcher runs the bundle from V8's code cache (compile-cache.ts), and a release V8 does not
 * checksum a cache it reads: a torn or damaged cache file crashed every later run of its command
 * (review: a zeroed 16 KiB block, single flipped bytes). With this V8 verifies the checksum and
 * refuses a damaged cache, which is then rewritten. Set here, first, on both sides of the cache:
 * V8 takes a cache only under the flags it was made with.
 */
setFlagsFromString('--verify-snapshot-checksum');
