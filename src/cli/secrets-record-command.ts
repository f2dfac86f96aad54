import type { Command } from 'commander';
import { exportKey, importKey, type TransferOutcome } from '../apply/index.js';
import { agentConfigPath, loadAgentConfig } from '../config/index.js';
import { ExitStatus } from '../core/errors.js';
import { formatProblem } from '../report/index.js';

interface KeyFlags {
  agentConfig?: string;
  stateDir?: string;
}

/**
 * `mpprov secrets-record export|import`: moves the key that hashes the secrets record from one
 * installation to another, on purpose, so runners sharing one record (--secrets-record) hash
 * alike. Only the key: the record itself is shared by its path or copied like any file.
 */
export function registerSecretsRecordCommand(program: Command): void {
  const group = program
    .command('secrets-record')
    .description(
      'move the key that hashes the secrets record between installations, so runners sharing one record (--secrets-record) hash alike',
    );
  withStateOptions(
    group
      .command('export')
      .description(
        "write this installation's secrets-record key to a new file (mode 0600, never over an existing file)",
      ),
  )
    .requiredOption('--key-out <file>', 'the file to create; it must not exist')
    .action(async (flags: KeyFlags & { keyOut: string }) => {
      process.exitCode = await withStateDir(flags, (stateDir) => exportKey(stateDir, flags.keyOut));
    });
  withStateOptions(
    group
      .command('import')
      .description("make a key written by `secrets-record export` this installation's secrets-record key"),
  )
    .requiredOption('--key-in <file>', 'the file `secrets-record export` wrote')
    .option('--replace', 'replace a different key this installation already has (its entries then count as changed)')
    .action(async (flags: KeyFlags & { keyIn: string; replace?: boolean }) => {
      process.exitCode = await withStateDir(flags, (stateDir) =>
        importKey(stateDir, flags.keyIn, flags.replace === true),
      );
    });
}

function withStateOptions(command: Command): Command {
  return command
    .option('--agent-config <file>', 'agent configuration (default $MPPROV_AGENT_CONFIG or /etc/mpprov/agent.yaml)')
    .option('--state-dir <dir>', 'state directory, where the key lives (overrides agent.yaml state_dir)');
}

async function withStateDir(flags: KeyFlags, act: (stateDir: string) => Promise<TransferOutcome>): Promise<number> {
  const loaded = await loadAgentConfig(agentConfigPath(flags.agentConfig));
  if (loaded.problems.length > 0) {
    for (const problem of loaded.problems) process.stdout.write(`${formatProblem(problem)}\n`);
    return ExitStatus.Failure;
  }
  const outcome = await act(flags.stateDir ?? loaded.config.stateDir);
  (outcome.ok ? process.stdout : process.stderr).write(`${outcome.sentence}\n`);
  return outcome.ok ? ExitStatus.Ok : ExitStatus.Failure;
}
