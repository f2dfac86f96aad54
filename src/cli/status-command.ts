import type { Command } from 'commander';
import { InvalidArgumentError } from 'commander';
import { readStatus, renderStatus, stateDirProblem } from '../agent/index.js';
import { readObserveStatus, type ObserveStatus } from '../observe/index.js';
import { agentConfigPath, agentSecrets, loadAgentConfig, type Problem } from '../config/index.js';
import { ExitStatus } from '../core/errors.js';
import { Redactor } from '../core/redact.js';
import { visibleJson, visibleValue } from '../core/visible-text.js';
import { formatProblem, summarizeProblems } from '../report/index.js';

export function registerStatusCommand(program: Command): void {
  program
    .command('status')
    .description("show the agent's running and recent jobs and their results (from its state directory)")
    .option(
      '--agent-config <file>',
      'agent configuration, for its state_dir (default $MPPROV_AGENT_CONFIG or /etc/mpprov/agent.yaml)',
    )
    .option('--state-dir <dir>', 'state directory (overrides agent.yaml state_dir)')
    .option('-n, --limit <n>', 'how many recent jobs to show', count, 20)
    .option('--json', 'print a machine-readable report')
    .action(async (flags: { agentConfig?: string; stateDir?: string; limit: number; json?: boolean }) => {
      let stateDir = flags.stateDir;
      // The state files were redacted as they were written; what is printed passes the redactor again.
      const redactor = new Redactor();
      const json = flags.json === true;
      // Whatever happens, --json prints one document: a program reading it never gets an empty stdout.
      const fail = (failure: StatusFailure): void => {
        process.stderr.write(failure.lines.map((line) => `${line}\n`).join(''));
        if (json) process.stdout.write(`${visibleJson(JSON.stringify({ error: failure.error }, null, 2))}\n`);
        process.exitCode = ExitStatus.Failure;
      };
      if (stateDir === undefined) {
        const file = agentConfigPath(flags.agentConfig);
        const loaded = await loadAgentConfig(file);
        if (loaded.problems.length > 0) {
          fail({
            lines: loaded.problems.map((problem) => formatProblem(problem)),
            error: {
              kind: 'agent-config',
              message: `the agent configuration ${file} has problems: ${summarizeProblems(loaded.problems)}`,
              problems: loaded.problems,
            },
          });
          return;
        }
        stateDir = loaded.config.stateDir;
        redactor.add(agentSecrets(loaded.config));
      }
      const problem = await stateDirProblem(stateDir);
      if (problem !== undefined) {
        fail({ lines: [`mpprov status: ${problem}`], error: { kind: 'state-dir', message: problem } });
        return;
      }
      let report: Awaited<ReturnType<typeof readStatus>>;
      try {
        report = await readStatus(stateDir, flags.limit);
      } catch (error) {
        const reason = (error as NodeJS.ErrnoException).code ?? 'error';
        const message = `the agent's state in ${stateDir} cannot be read (${reason})`;
        fail({ lines: [`mpprov status: ${message}`], error: { kind: 'state-dir', message } });
        return;
      }
      // Only on a host where `mpprov observe` ran: other hosts' output stays as it was.
      const observe = await readObserveStatus(stateDir);
      // Labels, names and sentences in the report are the sticks' and devices' text: escaped before
      // they are laid out, so each stays on its line.
      process.stdout.write(
        redactor.text(
          json
            ? `${visibleJson(JSON.stringify(observe === undefined ? report : { ...report, observe }, null, 2))}\n`
            : `${renderStatus(visibleValue(report))}${observe === undefined ? '' : `${observeLine(visibleValue(observe))}\n`}`,
        ),
      );
    });
}

/** Why status could not report: the lines for stderr, and the `error` object --json prints. */
interface StatusFailure {
  lines: string[];
  error: { kind: 'agent-config' | 'state-dir'; message: string; problems?: readonly Problem[] };
}

/** `events receiver: URL  registered  not blacklisted  last event TIME  checked TIME` */
function observeLine(o: ObserveStatus): string {
  return [
    `events receiver: ${o.publicUrl}`,
    o.registered ? 'registered' : 'NOT registered',
    o.blacklisted ? 'BLACKLISTED' : 'not blacklisted',
    `last event ${o.lastEventAt ?? 'none'}`,
    `checked ${o.checkedAt ?? 'never'}`,
  ].join('  ');
}

function count(value: string): number {
  const n = Number(value);
  if (!Number.isInteger(n) || n < 1) throw new InvalidArgumentError(`'${value}' is not a positive whole number`);
  return n;
}
