/**
 * node:child_process, loaded when a command first starts a child. Loading it costs about 5 ms of
 * CPU, and most runs of the modules that can start one (signature checks, device locks, preflight)
 * never do: `validate`, `plan` and `apply` import them all. process.getBuiltinModule is synchronous
 * and hands back the real module (execFile keeps its promisified form).
 */
export function childProcess(): typeof import('node:child_process') {
  return process.getBuiltinModule('node:child_process');
}
