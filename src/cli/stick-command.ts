import { type Command, InvalidArgumentError } from 'commander';
import { ExitStatus } from '../core/errors.js';
import { type Problem, Severity } from '../core/problem.js';
import { Redactor } from '../core/redact.js';
import { visibleJson, visibleLines, visibleText } from '../core/visible-text.js';
import { formatProblem, summarizeProblems } from '../report/index.js';
import type { NotAfter } from '../signature/index.js';
import { buildSticks, diffBuilds, STICKS_JSON } from '../stick-build/index.js';
import { nameList } from './name-list.js';
import { validUntil } from './sign-command.js';

interface BuildFlags {
  template: string;
  out: string;
  secretsDir?: string;
  files?: string;
  sign?: string;
  validUntil?: NotAfter;
  image?: boolean;
  limit?: string[];
  json?: boolean;
}

/** `stick diff`'s exit status on an error: 0 and 1 say whether the builds differ, as diff(1) does. */
const DIFF_ERROR = 2;

export function registerStickCommands(program: Command): void {
  const stick = program.command('stick').description('build the sticks of a fleet from an inventory and a template');
  stick
    .command('build')
    .description('one validated (and signed) stick per site: folders, FAT images and sticks.json')
    .argument('<inventory>', 'the inventory: YAML, or CSV (a file named .csv)')
    .requiredOption('--template <file>', 'one monitoring point with ${variables} (docs/rolling-out.md)')
    .requiredOption('--out <dir>', 'where the sticks go: a folder that does not exist or is empty')
    .option('--secrets-dir <dir>', 'where ${secret:NAME} is read from: the file DIR/NAME')
    .option('--files <dir>', "where the files the template names are copied from (default: the template's folder)")
    .option('--sign <key>', 'sign each stick with this SSH key (mpprov sign)')
    .option('--valid-until <date>', 'with --sign: each stick expires after this date (YYYY-MM-DD)', (text) => {
      const judged = validUntil(text, new Date());
      if (typeof judged === 'string') throw new InvalidArgumentError(judged);
      return judged;
    })
    .option('--image', 'also write each stick as a FAT image DIR/<site>.img')
    .option('--limit <sites>', 'only these sites (comma-separated)', nameList('site names'))
    .option('--json', 'print {"sticks": [...], "problems": [...]}')
    .action(async (inventory: string, flags: BuildFlags, command: Command) => {
      if (flags.validUntil !== undefined && flags.sign === undefined)
        command.error('error: --valid-until needs --sign: an unsigned policy file is ignored by the agent', {
          exitCode: ExitStatus.Usage,
        });
      process.exitCode = await runBuild(inventory, flags);
    });
  stick
    .command('diff')
    .description('what changed between two builds, per site and monitoring point (secrets only as "(changed)")')
    .argument('<old>', 'the --out folder of one build')
    .argument('<new>', 'the --out folder of another')
    .action(async (oldDir: string, newDir: string) => {
      const outcome = await diffBuilds(oldDir, newDir);
      if (!outcome.ok) {
        process.stderr.write(`mpprov stick diff: ${visibleText(outcome.message)}\n`);
        process.exitCode = DIFF_ERROR;
        return;
      }
      for (const line of outcome.lines) process.stdout.write(`${line}\n`);
      process.exitCode = outcome.lines.length === 0 ? ExitStatus.Ok : ExitStatus.Failure;
    });
}

async function runBuild(inventory: string, flags: BuildFlags): Promise<number> {
  const result = await buildSticks({
    inventory,
    template: flags.template,
    out: flags.out,
    image: flags.image === true,
    ...(flags.secretsDir === undefined ? {} : { secretsDir: flags.secretsDir }),
    ...(flags.files === undefined ? {} : { filesDir: flags.files }),
    ...(flags.sign === undefined ? {} : { signKey: flags.sign }),
    ...(flags.validUntil === undefined ? {} : { validUntil: flags.validUntil }),
    ...(flags.limit === undefined ? {} : { limit: flags.limit }),
  });
  // Every line passes the redactor of every secret the build read: a secret never reaches output.
  const redactor = new Redactor(result.secrets);
  const print = (text: string): void => void process.stdout.write(`${visibleLines(redactor.text(text))}\n`);
  const sticks = result.ran ? result.sticks : [];
  const errors = result.problems.some((p: Problem) => p.severity === Severity.Error);
  if (flags.json === true) {
    print(visibleJson(JSON.stringify({ sticks, problems: result.problems }, null, 2)));
  } else {
    for (const problem of result.problems) print(formatProblem(problem));
    for (const entry of sticks) {
      const signed = entry.signer === undefined ? 'unsigned' : `signed by ${entry.signer}`;
      const until = entry.not_after === undefined ? '' : `, valid until ${entry.not_after}`;
      const image = entry.image === undefined ? '' : ` + ${entry.image}`;
      print(
        `${entry.stick}/${image}: ${entry.monitoring_points.join(', ')}; mpprov.yaml sha256 ${entry.sha256}; ${signed}${until}`,
      );
    }
    const refused = result.ran ? `${result.failedSites} site(s) got no stick` : 'nothing was built';
    print(
      `${flags.out}: ${sticks.length} stick(s) built${result.ran ? ` (listed in ${STICKS_JSON})` : ''}, ${refused} (${summarizeProblems(result.problems)})`,
    );
  }
  if (!result.ran && result.usage) return ExitStatus.Usage;
  return errors || !result.ran ? ExitStatus.Failure : ExitStatus.Ok;
}
