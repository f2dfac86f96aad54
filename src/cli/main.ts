#!/usr/bin/env node
import { type LazyCommand, runCli } from './cli-program.js';
import { PLAN_AND_APPLY } from './plan-apply-entry.js';

/**
 * The `mpprov` command with every command (cli-program.ts). The bundle built from it is
 * mpprov-app.cjs; plan and apply run from a bundle of their own, apply-main.ts.
 */

/** In help order. One line per command module; a new command adds its line here. */
const COMMANDS: readonly LazyCommand[] = [
  { names: ['validate'], load: async () => (await import('./validate-command.js')).registerValidateCommand },
  PLAN_AND_APPLY,
  { names: ['preflight'], load: async () => (await import('./preflight-command.js')).registerPreflightCommand },
  { names: ['schema'], load: async () => (await import('./schema-command.js')).registerSchemaCommand },
  { names: ['run'], load: async () => (await import('./run-command.js')).registerRunCommand },
  { names: ['status'], load: async () => (await import('./status-command.js')).registerStatusCommand },
  { names: ['notify'], load: async () => (await import('./notify-command.js')).registerNotifyCommand },
  { names: ['simulate'], load: async () => (await import('./simulate-command.js')).registerSimulateCommand },
  { names: ['sign'], load: async () => (await import('./sign-command.js')).registerSignCommand },
  { names: ['stick'], load: async () => (await import('./stick-command.js')).registerStickCommands },
  {
    names: ['secrets-record'],
    load: async () => (await import('./secrets-record-command.js')).registerSecretsRecordCommand,
  },
  { names: ['observe'], load: async () => (await import('./observe-command.js')).registerObserveCommand },
  { names: ['service'], load: async () => (await import('./service-command.js')).registerServiceCommand },
  { names: ['describe-cli'], load: async () => (await import('./describe-command.js')).registerDescribeCommand },
];

// Not a top-level await: the bundle is CommonJS (packaging/bundle.mjs), which has none. A failure
// is an unhandled rejection: printed, exit code 1, as a rejected top-level await was.
void runCli(COMMANDS);
