/**
 * The commands that keep running (the agent, the simulator, the desktop notifier, the events
 * receiver): their start-up does not matter, what they do over hours does. The short commands
 * are tuned for a process that starts, does one thing and exits (compile-cache.ts, zod-jit.ts).
 */
export const LONG_RUNNING_COMMANDS: ReadonlySet<string> = new Set(['run', 'simulate', 'notify', 'observe']);
