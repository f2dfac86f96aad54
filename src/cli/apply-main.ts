#!/usr/bin/env node
import { runCli } from './cli-program.js';
import { PLAN_AND_APPLY } from './plan-apply-entry.js';

/**
 * `mpprov plan` and `mpprov apply` alone: the entry of mpprov-apply.cjs, the bundle the launcher
 * runs for those two words (bundle-launcher.ts). The fast path reads, hashes, loads from the code
 * cache and evaluates a bundle without the simulator, the agent, the stick builder, winston and
 * chokidar (2.0 MB of 3.5): main() is reached 8-10 ms sooner. Every other word, help included,
 * runs mpprov-app.cjs, where these two commands are registered the same way.
 */
void runCli([PLAN_AND_APPLY]);
