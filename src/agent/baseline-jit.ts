import { setFlagsFromString } from 'node:v8';

/**
 * Keeps the agent's JavaScript on V8's interpreter and baseline compiler (Sparkplug): no TurboFan, no Maglev.
 * The optimizing compiler's own code in the node binary (about 3.5 MiB of it), its working memory
 * and the optimized code stay resident once a few functions got hot in the first jobs. Measured
 * with bench/daemon.mjs's idle after 10 jobs: 81 -> 76.5 MiB RSS (median of 3); the jobs spend
 * their time waiting on the device, and their CPU time did not measurably grow (bench/daemon.mjs).
 * A V8 flag NODE_OPTIONS refuses, so set here, for `mpprov run` only, before the agent's first job;
 * the short commands (validate, apply) keep the optimizing tier.
 */
export function keepJitAtBaseline(): void {
  setFlagsFromString('--no-turbofan');
  // Node 22 and 24 also have Maglev, an optimizing tier between the two, on by default.
  setFlagsFromString('--no-maglev');
}
