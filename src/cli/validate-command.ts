import type { Command } from 'commander';
import { hasErrors, type Problem } from '../config/index.js';
import { configFileOf } from '../ingest/index.js';
import { ExitStatus } from '../core/errors.js';
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
  const problems = validated.problems;
  const valid = !hasErrors(problems);
  if (json) {
    process.stdout.write(`${JSON.stringify(jsonReport(file, valid, problems), null, 2)}\n`);
  } else {
    const context = process.stdout.isTTY
      ? { sourceText: validated.text, secretValues: [...validated.secrets.values()].map((s) => s.reveal()) }
      : undefined;
    for (const problem of problems) process.stdout.write(`${formatProblem(problem, context)}\n`);
    process.stdout.write(`${file}: ${valid ? 'valid' : 'INVALID'} (${summarizeProblems(problems)})\n`);
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
