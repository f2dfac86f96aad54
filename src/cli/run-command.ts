import { resolve } from 'node:path';
import type { Command } from 'commander';
import { holdSignal, keepJitAtBaseline, lockStateDir, runDaemon } from '../agent/index.js';
import { agentConfigPath, loadAgentConfig } from '../config/index.js';
import { ExitStatus } from '../core/errors.js';
import { packageVersion } from './package-version.js';

export function registerRunCommand(program: Command): void {
  program
    .command('run')
    .description(
      'run as the agent (systemd service): watch for USB sticks and profiles, configure their Monitoring Points, write usb.log back',
    )
    .option('--agent-config <file>', 'agent configuration (default $MPPROV_AGENT_CONFIG or /etc/mpprov/agent.yaml)')
    .option('--state-dir <dir>', 'state directory (overrides agent.yaml state_dir)')
    .option(
      '--secrets-record <file>',
      'the secrets record, e.g. one shared by several runners (overrides agent.yaml secrets_record)',
    )
    .action(async (flags: { agentConfig?: string; stateDir?: string; secretsRecord?: string }) => {
      // From the first line: a SIGHUP while agent.yaml is read and the state folder locked, before
      // the daemon starts, would otherwise kill the agent. The daemon does the reload once it can.
      const hangup = holdSignal('SIGHUP');
      keepJitAtBaseline();
      const agentConfigFile = agentConfigPath(flags.agentConfig);
      // One agent per state folder, taken before the daemon starts anything (no stick, no device).
      const stateDir = flags.stateDir ?? (await configuredStateDir(agentConfigFile));
      if (stateDir !== undefined) {
        const lock = await lockStateDir(stateDir);
        if (!lock.ok) {
          process.stderr.write(`${lock.sentence}\n`);
          process.exit(ExitStatus.Failure);
        }
      }
      const status = await runDaemon({
        agentConfigFile,
        ...(flags.stateDir === undefined ? {} : { stateDir: flags.stateDir }),
        ...(flags.secretsRecord === undefined ? {} : { secretsRecord: resolve(flags.secretsRecord) }),
        version: packageVersion(),
        hangup,
      });
      // Exit now: a device connection still open after a forced stop must not keep the agent alive.
      process.exit(status);
    });
}

/** agent.yaml's state_dir; undefined when the file has problems, which the daemon reports as it refuses to start. */
async function configuredStateDir(agentConfigFile: string): Promise<string | undefined> {
  const loaded = await loadAgentConfig(agentConfigFile);
  return loaded.problems.length > 0 ? undefined : loaded.config.stateDir;
}
