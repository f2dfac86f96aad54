import { Command, InvalidArgumentError } from 'commander';
import { agentConfigPath, agentSecrets, loadAgentConfig } from '../config/index.js';
import { ExitStatus, isMpprovError } from '../core/errors.js';
import { Redactor } from '../core/redact.js';
import { visibleLines } from '../core/visible-text.js';
import { runObserve } from '../observe/index.js';
import { formatProblem } from '../report/index.js';
import { createDataApiClient, OBSERVER_KINDS, type ObserverKind, serviceTarget } from '../service/index.js';

/**
 * `mpprov observe`: parses flags, loads agent.yaml, hands over to src/observe. Every line passes the
 * redactor (which knows the token) and has its control characters made visible.
 */

interface ObserveFlags {
  agentConfig?: string;
  once?: boolean;
  unregister?: boolean;
  takeOver: ObserverKind[];
}

export function registerObserveCommand(program: Command): void {
  program
    .command('observe')
    .description(
      "receive the monitoring service's events (service.events in agent.yaml) into <state_dir>/events.jsonl, registered safely with /v3/observer",
    )
    .option('--agent-config <file>', 'agent configuration (default $MPPROV_AGENT_CONFIG or /etc/mpprov/agent.yaml)')
    .option('--once', 'print what is registered and what would be sent, send nothing (dry run)')
    .option('--unregister', "remove this receiver's configuration only (the others are posted back)")
    .option(
      '--take-over <kind>',
      `move a kind another server of this user receives here (${OBSERVER_KINDS.join(', ')})`,
      takeOverKind,
      [],
    )
    .action(async (flags: ObserveFlags) => {
      process.exitCode = await observe(flags);
    });
}

function takeOverKind(value: string, previous: ObserverKind[]): ObserverKind[] {
  const kind = OBSERVER_KINDS.find((k) => k === value);
  if (kind === undefined) throw new InvalidArgumentError(`one of ${OBSERVER_KINDS.join(', ')}`);
  return [...previous, kind];
}

async function observe(flags: ObserveFlags): Promise<number> {
  const redactor = new Redactor();
  const say = (text: string): void => void process.stdout.write(`${visibleLines(redactor.text(text))}\n`);
  const loud = (text: string): void =>
    void process.stderr.write(`mpprov observe: ${visibleLines(redactor.text(text))}\n`);
  const file = agentConfigPath(flags.agentConfig);
  const loaded = await loadAgentConfig(file);
  redactor.add(agentSecrets(loaded.config));
  if (loaded.problems.length > 0) {
    for (const problem of loaded.problems)
      process.stderr.write(`${visibleLines(redactor.text(formatProblem(problem)))}\n`);
    return ExitStatus.Failure;
  }
  const settings = loaded.config.service;
  if (settings?.events === undefined) {
    loud(`${loaded.config.file ?? file} has no service.events block (listen, public_url)`);
    return ExitStatus.Failure;
  }
  const api = createDataApiClient(serviceTarget(settings));
  // A receiver is stopped by design (systemd stop): the registration stays, the loop ends, exit 0.
  const stop = new AbortController();
  const abort = (): void => stop.abort();
  process.once('SIGTERM', abort).once('SIGINT', abort);
  try {
    return await runObserve({
      api,
      events: settings.events,
      stateDir: loaded.config.stateDir,
      once: flags.once,
      unregister: flags.unregister,
      takeOver: flags.takeOver,
      say,
      loud,
      signal: stop.signal,
    });
  } catch (error) {
    if (isSystemError(error)) {
      // A state folder missing, read-only or full is the operator's to fix: a sentence, not a stack.
      loud(`${error.syscall} ${error.path ?? ''} failed (${error.code}): check state_dir ${loaded.config.stateDir}`);
      return ExitStatus.Failure;
    }
    if (!isMpprovError(error)) throw error;
    loud(error.message);
    return ExitStatus.Failure;
  } finally {
    process.off('SIGTERM', abort).off('SIGINT', abort);
    await api.close();
  }
}

function isSystemError(error: unknown): error is NodeJS.ErrnoException & { code: string; syscall: string } {
  const e = error as NodeJS.ErrnoException | undefined;
  return error instanceof Error && typeof e?.code === 'string' && typeof e.syscall === 'string';
}
