import { LONG_RUNNING_COMMANDS } from './long-running.js';

/**
 * zod compiles each object schema into a function (`new Function`) on its first parse, so that
 * later parses of the same schema run faster. A short command parses each schema a handful of
 * times and exits: the compiling costs more than it saves (no-change `apply`, CPU time, median of
 * 15 interleaved runs: 277 -> 264 ms). Without it zod parses the same way through its general
 * path, with the same results and the same issues. The long-running commands keep it: the agent
 * and the simulator parse the same answers for hours.
 *
 * Called before any command module is loaded: zod decides per schema, as the schema is built.
 */
export async function configureZodFor(args: readonly string[]): Promise<void> {
  const first = args[0];
  if (first !== undefined && LONG_RUNNING_COMMANDS.has(first)) return;
  (await import('zod')).config({ jitless: true });
}
