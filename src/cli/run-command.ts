import { resolve } from 'node:path';
import type { Command } from 'commander';
import { keepJitAtBaseline, runDaemon } from '../agent/index.js';
import { agentConfigPath } from '../config/index.js';
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
      keepJitAtBaseline();
      const status = await runDaemon({
        agentConfigFile: agentConfigPath(flags.agentConfig),
        ...(flags.stateDir === undefined ? {} : { stateDir: flags.stateDir }),
        ...(flags.secretsRecord === undefined ? {} : { secretsRecord: resolve(flags.secretsRecord) }),
        version: packageVersion(),
      });
      // Exit now: a device connection still open after a forced stop must not keep the agent alive.
      process.exit(status);
    });
}
