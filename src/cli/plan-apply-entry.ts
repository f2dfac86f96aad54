import type { LazyCommand } from './cli-program.js';

/** `plan` and `apply`, one module: in main.ts's table and alone in apply-main.ts's. */
export const PLAN_AND_APPLY: LazyCommand = {
  names: ['plan', 'apply'],
  load: async () => (await import('./apply-command.js')).registerApplyCommands,
};
