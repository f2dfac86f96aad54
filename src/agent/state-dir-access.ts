import { access, constants, stat } from 'node:fs/promises';
import { join } from 'node:path';
import { STATE_FILES } from './state-store.js';

/**
 * Whether `mpprov status` can read the agent's state directory, as a sentence when it cannot. The
 * agent runs as root with UMask=0077, so a technician without sudo hits EACCES: without this check
 * the missing history read as "recent jobs: none yet", which is a lie.
 */
export async function stateDirProblem(stateDir: string): Promise<string | undefined> {
  try {
    if (!(await stat(stateDir)).isDirectory())
      return `${stateDir} is not a directory: check state_dir in agent.yaml or --state-dir`;
    await access(stateDir, constants.R_OK | constants.X_OK);
  } catch (error) {
    return describe(error, stateDir);
  }
  const history = join(stateDir, STATE_FILES.history);
  try {
    await access(history, constants.R_OK);
  } catch (error) {
    // No history yet is a fresh agent, not a problem; an unreadable one is.
    if ((error as NodeJS.ErrnoException).code !== 'ENOENT') return describe(error, history);
  }
  return undefined;
}

function describe(error: unknown, path: string): string {
  switch ((error as NodeJS.ErrnoException).code) {
    case 'ENOENT':
      return `the state directory ${path} does not exist: the agent has not run with it yet, or agent.yaml's state_dir names another folder (give it with --state-dir)`;
    case 'EACCES':
    case 'EPERM':
      return `cannot read ${path}: permission denied (the agent keeps its state readable by root only); run sudo mpprov status`;
    case 'ENOTDIR':
      return `${path} is not a directory: check state_dir in agent.yaml or --state-dir`;
    default:
      return `cannot read ${path} (${(error as NodeJS.ErrnoException).code ?? (error as Error).message})`;
  }
}
