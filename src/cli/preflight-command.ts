import { InvalidArgumentError, type Command } from 'commander';
import { validateStick } from '../certs/index.js';
import { hasErrors } from '../config/index.js';
import { ExitStatus } from '../core/errors.js';
import { Redactor } from '../core/redact.js';
import { visibleJson, visibleLines } from '../core/visible-text.js';
import { configFileOf } from '../ingest/index.js';
import {
  DEFAULT_TIMEOUT_MS,
  DhcpOutcome,
  Dot1xOutcome,
  runPreflight,
  selectTarget,
  type PreflightReport,
} from '../preflight/index.js';
import { formatProblem } from '../report/index.js';
import { stopOnSignal } from './stop-on-signal.js';

interface PreflightFlags {
  port: string;
  monitoringPoint?: string;
  interface?: string;
  timeout?: number;
  json?: boolean;
}

export function registerPreflightCommand(program: Command): void {
  program
    .command('preflight')
    .description("try the stick's 802.1X, VLAN and DHCP on the laptop's own port first; nothing is sent to the MP")
    .argument('<stick>', 'mpprov.yaml, or a folder that holds one')
    .requiredOption('--port <iface>', "the laptop's wired interface, plugged into the MP's switch port")
    .option('--monitoring-point <name>', "which Monitoring Point (default: the stick's only one)")
    .option('--interface <name>', 'which of its interfaces (default: its only 802.1X interface)')
    .option('--timeout <seconds>', 'bound on the 802.1X verdict and, separately, on DHCP (default 30)', parseSeconds)
    .option('--json', 'print one machine-readable document')
    .action(async (stick: string, flags: PreflightFlags) => {
      process.exitCode = await runPreflightCommand(stick, flags);
    });
}

function parseSeconds(text: string): number {
  const seconds = Number(text);
  if (!/^\d+(\.\d+)?$/.test(text) || seconds <= 0 || seconds > 600)
    throw new InvalidArgumentError('give a number of seconds from 1 to 600.');
  return seconds;
}

/** A report before the port was tried: the stick or the command line stopped it. */
function unTried(flags: PreflightFlags, cause: string, problems: string[]): PreflightReport {
  return {
    port: flags.port,
    monitoring_point: flags.monitoringPoint ?? null,
    interface: flags.interface ?? null,
    dot1x: { outcome: Dot1xOutcome.Error, cause },
    dhcp: { outcome: DhcpOutcome.Skipped },
    gateway_answers: null,
    fits: null,
    problems,
  };
}

async function runPreflightCommand(stick: string, flags: PreflightFlags): Promise<number> {
  let where = `while reading ${stick}; nothing was sent to any device`;
  // The preflight's own handlers give the port back first; this one then says where it was and exits.
  stopOnSignal({ where: () => where, say: (line) => void process.stderr.write(`${visibleLines(line)}\n`) });
  const file = await configFileOf(stick);
  const validated = await validateStick(file);
  const redactor = new Redactor(validated.secrets);
  const err = (line: string): void => void process.stderr.write(`${visibleLines(redactor.text(line))}\n`);
  const finish = (report: PreflightReport, status: number): number => {
    if (flags.json === true) process.stdout.write(`${visibleJson(redactor.text(JSON.stringify(report, null, 2)))}\n`);
    else process.stdout.write(`${visibleLines(redactor.text(textReport(report)))}\n`);
    return status;
  };
  const usage = (sentence: string): number => {
    err(`mpprov preflight: ${sentence}`);
    return finish(unTried(flags, sentence, [sentence]), ExitStatus.Usage);
  };

  const model = validated.model;
  if (model === undefined || hasErrors(validated.problems)) {
    const problems = validated.problems.filter((p) => p.severity === 'error').map((p) => formatProblem(p));
    return finish(unTried(flags, `the stick ${file} is not valid`, problems), ExitStatus.Failure);
  }
  const choice = selectTarget(model, { monitoringPoint: flags.monitoringPoint, interface: flags.interface });
  if ('usage' in choice) return usage(choice.usage);
  where = `while trying ${flags.port}; the port was given back, nothing was sent to the Monitoring Point`;
  const {
    report,
    passed,
    usage: wrongPort,
  } = await runPreflight({
    port: flags.port,
    target: choice.target,
    files: validated.files,
    timeoutMs: flags.timeout === undefined ? DEFAULT_TIMEOUT_MS : flags.timeout * 1000,
    say: (line) => err(`preflight: ${line}`),
  });
  if (wrongPort !== undefined) {
    err(`mpprov preflight: ${wrongPort}`);
    return finish(report, ExitStatus.Usage);
  }
  return finish(report, passed ? ExitStatus.Ok : ExitStatus.Failure);
}

function textReport(report: PreflightReport): string {
  const dhcp =
    report.dhcp.outcome === DhcpOutcome.Address
      ? `address ${report.dhcp.address ?? '?'}, gateway ${report.dhcp.gateway ?? 'none'}, DNS ${(report.dhcp.dns ?? []).join(' ') || 'none'}`
      : report.dhcp.outcome;
  const yesNo = (value: boolean | null): string => (value === null ? 'cannot be judged' : value ? 'yes' : 'no');
  return [
    `port ${report.port}: ${report.monitoring_point ?? '?'} ${report.interface ?? '?'}`,
    `  802.1X: ${report.dot1x.outcome}${report.dot1x.method === undefined ? '' : ` (${report.dot1x.method})`}: ${report.dot1x.cause}`,
    `  DHCP: ${dhcp}`,
    `  gateway answers: ${yesNo(report.gateway_answers)}`,
    `  addresses fit: ${yesNo(report.fits)}`,
    ...report.problems.map((p) => `  problem: ${p}`),
  ].join('\n');
}
