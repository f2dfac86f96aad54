import type { Command } from 'commander';
import { agentConfigPath, hasErrors, loadAgentConfig, pathsWithoutService, type Problem } from '../config/index.js';
import { configFileOf } from '../ingest/index.js';
import { ExitStatus } from '../core/errors.js';
import { Redactor } from '../core/redact.js';
import { visibleJson, visibleLines } from '../core/visible-text.js';
import { formatProblem, summarizeProblems } from '../report/index.js';
import { validateStick, type ValidatedStick } from '../certs/index.js';
import type { SignatureVerdict } from '../signature/index.js';
import { checkFolderSignature } from './folder-signature.js';
import { stopOnSignal } from './stop-on-signal.js';

export function registerValidateCommand(program: Command): void {
  program
    .command('validate')
    .description('check a configuration file (or a stick folder) and every certificate and key it names')
    .argument('<file>', 'mpprov.yaml, or a folder that holds one')
    .option('--json', 'print a machine-readable report')
    .option('--allowed-signers <file>', "also check the stick's signature against this OpenSSH allowed_signers file")
    .option(
      '--agent-config <file>',
      'agent configuration, to tell whether paths can be checked (default $MPPROV_AGENT_CONFIG or /etc/mpprov/agent.yaml)',
    )
    .action(async (target: string, options: { json?: boolean; allowedSigners?: string; agentConfig?: string }) => {
      process.exitCode = await runValidate(target, options.json === true, options.allowedSigners, options.agentConfig);
    });
}

async function runValidate(
  target: string,
  json: boolean,
  allowedSigners: string | undefined,
  agentConfig: string | undefined,
): Promise<number> {
  // validate sends nothing anywhere: a signal at any point ends it at once, saying where it was.
  stopOnSignal({
    where: () => `while checking ${target}; validate sends nothing to any device`,
    say: (line) => void process.stderr.write(`${line}\n`),
  });
  const file = await configFileOf(target);
  const validated = await validateStick(file);
  const redactor = new Redactor(validated.secrets);
  // Problems quote the stick's keys and values: every line is shown with its controls escaped.
  const print = (text: string): void => void process.stdout.write(`${visibleLines(redactor.text(text))}\n`);
  // validate reports; it never refuses an unsigned folder (that is the agent's and apply's policy to apply).
  const signature =
    allowedSigners === undefined
      ? undefined
      : await checkFolderSignature(file, validated, { required: false, allowedSigners });
  const problems = [
    ...validated.problems,
    ...(await pathsUnchecked(validated, agentConfig)),
    ...(signature?.problems ?? []),
    ...(signature?.warnings ?? []),
  ];
  const valid = !hasErrors(problems);
  if (json) {
    print(
      visibleJson(
        JSON.stringify(
          {
            ...(jsonReport(file, valid, problems) as object),
            ...(signature === undefined ? {} : { signature: signatureSummary(signature) }),
          },
          null,
          2,
        ),
      ),
    );
  } else {
    // Source lines under problems on a terminal only; the stick withholds lines that hold a secret.
    const source = process.stdout.isTTY ? validated : undefined;
    for (const problem of problems) print(formatProblem(problem, source));
    if (signature !== undefined) print(`${file}: ${signature.description}`);
    print(`${file}: ${valid ? 'valid' : 'INVALID'} (${summarizeProblems(problems)})`);
  }
  return valid ? ExitStatus.Ok : ExitStatus.Failure;
}

/**
 * Paths need agent.yaml's service block to be created and confirmed: without one, a warning per
 * monitoring point that names paths. agent.yaml is read only when the stick names any (its
 * problems are `mpprov run`'s and `apply`'s to report; a broken service block counts as none).
 */
async function pathsUnchecked(validated: ValidatedStick, agentConfig: string | undefined): Promise<Problem[]> {
  const model = validated.model;
  if (model === undefined || !model.monitoring_points.some((mp) => (mp.paths?.length ?? 0) > 0)) return [];
  const agent = await loadAgentConfig(agentConfigPath(agentConfig));
  if (agent.config.service !== undefined) return [];
  return pathsWithoutService(model, validated.place);
}

function signatureSummary(signature: SignatureVerdict): { status: string; principal?: string } {
  return {
    status: signature.status,
    ...(signature.principal === undefined ? {} : { principal: signature.principal }),
  };
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
