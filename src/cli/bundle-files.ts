/**
 * The bundles the launcher chooses from (packaging/bundle.mjs builds them, the .deb and
 * install.sh ship them beside it or in ../lib/mpprov/).
 */

/** Every command: src/cli/main.ts. */
export const FULL_APP = 'mpprov-app.cjs';

/** `plan` and `apply` alone: src/cli/apply-main.ts, 40 % smaller, so their start is shorter. */
export const APPLY_APP = 'mpprov-apply.cjs';

/** The first words that run APPLY_APP (when it is there; mpprov-app.cjs runs them as well). */
export const APPLY_COMMANDS: readonly string[] = ['plan', 'apply'];
