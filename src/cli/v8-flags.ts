import { setFlagsFromString } from 'node:v8';

/**
 * Imported first by main.ts, before any module that loads undici. undici parses HTTP with llhttp
 * compiled to WebAssembly, and V8 then recompiles that module with its optimizing tier on a
 * background thread; a short command (a no-change `apply` takes about 350 ms) ends before that job
 * does and its exit waits for it, about 50 ms (bench: no-change re-apply, median of 12, 353 -> 306
 * ms). The baseline tier alone parses the few KiB a device or the service sends fast enough.
 */
setFlagsFromString('--liftoff-only');
