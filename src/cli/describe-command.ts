import { Command, type Help } from 'commander';

/**
 * `mpprov describe-cli` (hidden): the command tree as JSON, read from the very program that parses
 * the arguments. The packaging (packaging/build-package.mjs) runs it on the bundle to generate
 * the man page mpprov(1) and the bash and zsh completions, so they can never list a command or an
 * option the binary does not have. Hidden because it is for the build, not for technicians.
 */

export interface CliOption {
  flags: string;
  short?: string;
  long?: string;
  /** `<value>` (required) or `[value]` (optional) after the flag. */
  value: 'none' | 'required' | 'optional';
  description: string;
  choices?: readonly string[];
}

export interface CliArgument {
  name: string;
  required: boolean;
  variadic: boolean;
  description: string;
}

export interface CliCommand {
  name: string;
  description: string;
  usage: string;
  arguments: CliArgument[];
  options: CliOption[];
  commands: CliCommand[];
  /** The text `mpprov ... --help` prints. */
  help: string;
}

export interface CliDescription extends CliCommand {
  version: string;
}

export function registerDescribeCommand(program: Command): void {
  program
    .command('describe-cli', { hidden: true })
    .description('print the command tree as JSON (for generating the man page and shell completions)')
    .action(() => {
      process.stdout.write(`${JSON.stringify(describeCli(program), null, 2)}\n`);
    });
}

export function describeCli(program: Command): CliDescription {
  return { ...describeCommand(program, program.createHelp()), version: program.version() ?? '' };
}

function describeCommand(command: Command, help: Help): CliCommand {
  return {
    name: command.name(),
    description: command.description(),
    usage: command.usage(),
    arguments: help
      .visibleArguments(command)
      .map((a) => ({ name: a.name(), required: a.required, variadic: a.variadic, description: a.description })),
    options: help.visibleOptions(command).map((o) => ({
      flags: o.flags,
      ...(o.short === undefined ? {} : { short: o.short }),
      ...(o.long === undefined ? {} : { long: o.long }),
      value: o.required ? 'required' : o.optional ? 'optional' : 'none',
      description: o.description,
      ...(o.argChoices === undefined ? {} : { choices: o.argChoices }),
    })),
    commands: help
      .visibleCommands(command)
      .filter((c) => c.name() !== 'help')
      .map((c) => describeCommand(c, help)),
    help: command.helpInformation(),
  };
}
