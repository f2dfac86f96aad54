#!/usr/bin/env node
import { Command } from 'commander';
import { registerApplyCommands } from './apply-command.js';
import { registerNotifyCommand } from './notify-command.js';
import { registerRunCommand } from './run-command.js';
import { registerStatusCommand } from './status-command.js';
import { registerSchemaCommand } from './schema-command.js';
import { registerServiceCommand } from './service-command.js';
import { registerSimulateCommand } from './simulate-command.js';
import { registerSignCommand } from './sign-command.js';
import { registerSecretsRecordCommand } from './secrets-record-command.js';
import { registerValidateCommand } from './validate-command.js';
import { packageVersion } from './package-version.js';
import { registerDescribeCommand } from './describe-command.js';
import { exitUsageErrorsWith64 } from './usage-exit.js';

/** The `mpprov` command: a thin shell that parses arguments and hands over to the pipeline. */
const program = new Command()
  .name('mpprov')
  .description('Provision Monitoring Points from a USB stick or a profile through the Admin API v1')
  .version(packageVersion())
  .showHelpAfterError();
exitUsageErrorsWith64(program);

registerValidateCommand(program);
registerApplyCommands(program);
registerSchemaCommand(program);
registerRunCommand(program);
registerStatusCommand(program);
registerNotifyCommand(program);
registerSimulateCommand(program);
registerSignCommand(program);
registerSecretsRecordCommand(program);
registerServiceCommand(program);
registerDescribeCommand(program);

await program.parseAsync(process.argv);
