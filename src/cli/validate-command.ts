import type { Command } from 'commander';
import { hasErrors, type Problem } from '../config/index.js';
import { configFileOf } from '../ingest/index.js';
import { ExitStatus } from '../core/errors.js';
import { Redactor } from '../core/redact.js';
import { formatProblem, summarizeProblems } from '../report/index.js';
import { validateStick } from '../certs/index.js';

export function registerValidateCommand(program: Command): void {
  program
    .command('validate')
    .description('check a configuration file (or a stick folder) and every certificate and key it names')
    .argument('<file>', 'mpprov.yaml, or a folder that holds one')
    .option('--json', 'print a machine-readable report')
    .action(async (target: string, options: { json?: boolean }) => {
      process.exitCode = await runValidate(target, options.json === true);
    });
}

async function runValidate(target: string, json: boolean): Promise<number> {
  const file = await configFileOf(target);
  const validated = await validateStick(file);
  const redactor = new Redactor(validated.secrets);
  const print = (text: string): void => void process.stdout.write(`${redactor.text(text)}\n`);
  const problems = validated.problems;
  const valid = !hasErrors(problems);
  if (json) {
    print(JSON.stringify(jsonReport(file, valid, problems), null, 2));
  } else {
    // Source lines under problems on a terminal only; the stick withholds lines that hold a secret.
    const source = process.stdout.isTTY ? validated : undefined;
    for (const problem of problems) print(formatProblem(problem, source));
    print(`${file}: ${valid ? 'valid' : 'INVALID'} (${summarizeProblems(problems)})`);
  }
  return valid ? ExitStatus.Ok : ExitStatus.Failure;
}

function jsonReport(file: string, valid: boolean, problems: readonly Problem[]): unknown {
  return {
    file,
    valid,
    errors: problems.filter((p) => p.severity === 'error').length,
    warnings: problems.filter((p) => p.severity === 'warning').length,
    problems,
  };
}
