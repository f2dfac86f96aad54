import { type AgentConfig, agentSecrets, loadAgentConfig } from '../config/index.js';
import type { Redactor } from '../core/redact.js';
import { type AgentLogger, formatProblem } from '../report/index.js';
import { openStateStore, type StateStore } from './state-store.js';

/**
 * agent.yaml again on SIGHUP, taken whole or not at all: a file with a problem, a file gone, or a
 * state folder that cannot be used keeps every setting in use, and only then does anything change.
 * A running job keeps the configuration it started with (it was handed the settings of its start).
 */

/** The agent's configuration of the moment and the state folder it names. */
export interface AgentSettings {
  readonly agent: AgentConfig;
  readonly state: StateStore;
}

/** The command line's settings, which win over agent.yaml's at start-up and across reloads. */
export interface AgentOverrides {
  stateDir?: string | undefined;
  secretsRecord?: string | undefined;
}

export function withOverrides(config: AgentConfig, overrides: AgentOverrides): AgentConfig {
  if (overrides.stateDir === undefined && overrides.secretsRecord === undefined) return config;
  return {
    ...config,
    ...(overrides.stateDir === undefined ? {} : { stateDir: overrides.stateDir }),
    ...(overrides.secretsRecord === undefined ? {} : { secretsRecord: overrides.secretsRecord }),
  };
}

export interface ReloadParts {
  /** agent.yaml's path, as the agent was started with it. */
  file: string;
  env: NodeJS.ProcessEnv;
  overrides: AgentOverrides;
  redactor: Redactor;
  /** Takes the secrets of the settings the agent started with out of the redactor. */
  removeStartSecrets: () => void;
  logger: Pick<AgentLogger, 'log' | 'setLevel'>;
  /** What follows the configuration (the watchers, the status page), told once a reload is taken. */
  follow: (before: AgentConfig, after: AgentConfig) => Promise<void>;
}

export interface AgentReloader {
  current(): AgentSettings;
  /** One reload, after the one under way; resolves once it is done (never rejects). */
  reload(): Promise<void>;
  /** Resolves once no reload is under way. */
  settled(): Promise<void>;
}

export function createReloader(initial: AgentSettings, parts: ReloadParts): AgentReloader {
  const { logger } = parts;
  let settings = initial;
  let removeSecrets = parts.removeStartSecrets;
  let chain = Promise.resolve();

  const reloadOnce = async (): Promise<void> => {
    const next = await prepareReload(settings, parts);
    if (next === undefined) return;
    const before = settings.agent;
    settings = next;
    removeSecrets();
    removeSecrets = parts.redactor.add(agentSecrets(next.agent));
    logger.setLevel(next.agent.logLevel);
    await parts.follow(before, next.agent);
    logger.log(
      'info',
      `SIGHUP: reloaded ${parts.file}; media roots ${next.agent.mediaRoots.join(', ')}, profiles ${next.agent.profilesDirs.join(', ') || '(none)'}`,
    );
  };

  return {
    current: () => settings,
    reload: () =>
      (chain = chain
        .then(reloadOnce)
        .catch((error: unknown) => logger.log('error', `SIGHUP: reload failed: ${(error as Error).message}`))),
    settled: () => chain,
  };
}

/**
 * Everything that can fail before anything changes: the new settings, or undefined (said in the
 * journal) when the reload is refused and the settings in use stay.
 */
async function prepareReload(current: AgentSettings, parts: ReloadParts): Promise<AgentSettings | undefined> {
  const { logger } = parts;
  const next = await loadAgentConfig(parts.file, parts.env);
  if (next.problems.length > 0) {
    for (const problem of next.problems) logger.log('error', `agent config: ${formatProblem(problem)}`);
    logger.log('error', 'SIGHUP: the agent config is invalid; keeping the one in use');
    return undefined;
  }
  // A missing file means every default at start-up; one that vanished since (an editor's
  // rename, a mistake) would swap the media roots and the state folder for the defaults.
  if (next.config.file === undefined && current.agent.file !== undefined) {
    logger.log('error', `SIGHUP: ${parts.file} does not exist (any more); keeping the agent config in use`);
    return undefined;
  }
  const agent = withOverrides(next.config, parts.overrides);
  if (agent.stateDir === current.agent.stateDir) return { agent, state: current.state };
  try {
    return { agent, state: await openStateStore(agent.stateDir, parts.redactor) };
  } catch (error) {
    logger.log(
      'error',
      `SIGHUP: cannot use the state directory ${agent.stateDir} (${(error as Error).message}); keeping the agent config in use`,
    );
    return undefined;
  }
}
