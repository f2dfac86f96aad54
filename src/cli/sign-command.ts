import { lstat, readFile, stat } from 'node:fs/promises';
import { basename, join } from 'node:path';
import type { Command } from 'commander';
import { hasErrors, loadStick } from '../config/index.js';
import { ExitStatus } from '../core/errors.js';
import { visibleText } from '../core/visible-text.js';
import { findConfigFile } from '../ingest/index.js';
import { formatProblem, summarizeProblems } from '../report/index.js';
import {
  formatPolicy,
  hasExpired,
  MANIFEST_NAME,
  type NotAfter,
  parseNotAfter,
  parsePolicy,
  POLICY_NAME,
  referencedFiles,
  SIGNATURE_NAME,
  signStick,
} from '../signature/index.js';
import { replaceDurably } from '../core/durable-write.js';

interface SignFlags {
  key: string;
  include?: string[];
  validUntil?: string;
}

export function registerSignCommand(program: Command): void {
  program
    .command('sign')
    .description(
      `sign a stick folder with an SSH key: write ${MANIFEST_NAME} (its files' SHA-256) and ${SIGNATURE_NAME}`,
    )
    .argument('<dir>', 'the stick folder, holding mpprov.yaml')
    .requiredOption('--key <file>', 'SSH private key (or its .pub, with the private key in ssh-agent)')
    .option('--include <path...>', 'more files to list and sign, relative to the folder')
    .option(
      '--valid-until <date>',
      `write ${POLICY_NAME} with not_after (YYYY-MM-DD, the end of that day UTC, or an RFC 3339 time) and sign it`,
    )
    .action(async (dir: string, flags: SignFlags) => {
      process.exitCode = await runSign(dir, flags);
    });
}

async function runSign(dir: string, flags: SignFlags): Promise<number> {
  let notAfter: NotAfter | undefined;
  if (flags.validUntil !== undefined) {
    const judged = validUntil(flags.validUntil, new Date());
    if (typeof judged === 'string') {
      process.stderr.write(`mpprov sign: --valid-until ${judged}\n`);
      return ExitStatus.Usage;
    }
    notAfter = judged;
  }
  const isFolder = await stat(dir).then(
    (s) => s.isDirectory(),
    () => false,
  );
  if (!isFolder) {
    process.stderr.write(`mpprov sign: ${dir} is not a folder (give the stick's folder, which holds mpprov.yaml)\n`);
    return ExitStatus.Usage;
  }
  const configFile = await findConfigFile(dir);
  if (configFile === undefined) {
    process.stdout.write(`${dir}: not signed: it holds no mpprov.yaml\n`);
    return ExitStatus.Failure;
  }
  // Only a configuration that loads cleanly (YAML, schema, rules, every referenced file) is
  // signed: a signature vouches for the stick, and a broken one would only be refused later.
  const loaded = await loadStick(configFile);
  for (const problem of loaded.problems) process.stdout.write(`${formatProblem(problem)}\n`);
  if (hasErrors(loaded.problems) || loaded.model === undefined) {
    process.stdout.write(`${dir}: not signed: the configuration is invalid (${summarizeProblems(loaded.problems)})\n`);
    return ExitStatus.Failure;
  }
  if (notAfter !== undefined) {
    try {
      await replaceDurably(join(dir, POLICY_NAME), formatPolicy(notAfter));
    } catch (error) {
      const code = (error as NodeJS.ErrnoException).code ?? 'error';
      process.stdout.write(`${join(dir, POLICY_NAME)}: cannot be written (${code})\n${dir}: not signed\n`);
      return ExitStatus.Failure;
    }
  }
  // A policy file already in the folder is signed with it: left unlisted, the agent would ignore it.
  const hasPolicy = await lstat(join(dir, POLICY_NAME)).then(
    () => true,
    () => false,
  );
  if (hasPolicy && notAfter === undefined) {
    // The signer vouches for the policy as it stands: one that has passed, or is none, is not signed.
    const policy = parsePolicy(await readFile(join(dir, POLICY_NAME)).catch(() => Buffer.alloc(0)));
    const why = !policy.ok
      ? policy.message
      : hasExpired(policy.notAfter, new Date())
        ? `not_after ${policy.notAfter.text} has already passed`
        : undefined;
    if (why !== undefined) {
      process.stdout.write(`${join(dir, POLICY_NAME)}: ${why} (give --valid-until DATE)\n${dir}: not signed\n`);
      return ExitStatus.Failure;
    }
  }
  const outcome = await signStick(dir, flags.key, {
    configName: basename(configFile),
    referencedPaths: referencedFiles(loaded.model),
    extraPaths: [...(flags.include ?? []), ...(hasPolicy ? [POLICY_NAME] : [])],
    interactive: process.stdin.isTTY === true,
  });
  if (!outcome.ok) {
    for (const problem of outcome.problems) process.stdout.write(`${formatProblem(problem)}\n`);
    process.stdout.write(`${dir}: not signed\n`);
    return ExitStatus.Failure;
  }
  const key = outcome.key === undefined ? '' : ` with ${outcome.key}`;
  // The listed names are the stick's own values: shown escaped, each on this one line.
  process.stdout.write(`${dir}: signed${key}; ${MANIFEST_NAME} lists ${outcome.listed.map(visibleText).join(', ')}\n`);
  return ExitStatus.Ok;
}

/**
 * `--valid-until`'s value, or why it is refused: a date that has passed would make a stick every
 * agent refuses at once.
 */
export function validUntil(text: string, now: Date): NotAfter | string {
  const notAfter = parseNotAfter(text);
  if (notAfter === undefined)
    return `'${visibleText(text)}' is neither a date (YYYY-MM-DD) nor an RFC 3339 time (2026-12-31T18:00:00Z)`;
  if (notAfter.instant.getTime() < now.getTime()) return `${notAfter.text} has already passed`;
  return notAfter;
}
