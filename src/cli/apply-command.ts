import { Writable } from 'node:stream';
import { type Command, InvalidArgumentError, Option } from 'commander';
import {
  applyStick,
  type ApplyEvent,
  type DeviceResult,
  limitProblem,
  notConfirmed,
  pathsWords,
  Outcome,
  stickSecrets,
  UPDATE_SECRETS_CHOICES,
  type UpdateSecrets,
  type StickResult,
  StickOutcome,
  secretsRecordProblem,
} from '../apply/index.js';
import { validateStick } from '../certs/index.js';
import { agentConfigPath, type AgentConfig, loadAgentConfig, type Problem } from '../config/index.js';
import { ErrorCode, ExitStatus } from '../core/errors.js';
import { Redactor } from '../core/redact.js';
import { visibleJson, visibleLines, visibleText } from '../core/visible-text.js';
import { configFileOf } from '../ingest/index.js';
import { createProgressDisplay, formatProblem, renderPlan } from '../report/index.js';
import type { ConnectionOutcomeKind } from '../service/index.js';
import { jsonVersionLine } from './json-version.js';
import { nameList } from './name-list.js';
import { ALLOW_UNSIGNED_FLAG, stickSignatureGate, UNSIGNED_SERVICE_SENTENCE } from './stick-signature-gate.js';
import { stopOnSignal } from './stop-on-signal.js';
import { createStopProgress } from './stop-progress.js';
import { preflightGate } from './preflight-gate.js';

/**
 * ConnectionOutcomeKind.Unchecked, by its value: importing the constant would load the service's
 * client and models on every plan and apply, with or without a service block.
 */
const UNCHECKED: ConnectionOutcomeKind = 'unchecked';

interface ApplyFlags {
  agentConfig?: string;
  stateDir?: string;
  secretsRecord?: string;
  allowDisconnect?: boolean;
  discardPending?: boolean;
  rollback: boolean;
  restartTimeout?: number;
  dot1xGrace?: number;
  concurrency?: number;
  json?: boolean;
  limit?: string[];
  allowUnsigned?: boolean;
  updateSecrets?: UpdateSecrets;
  lockWait?: number;
  preflight?: string;
}

function addEngineOptions(command: Command): Command {
  return command
    .argument('<file>', 'the configuration file (mpprov.yaml, a profile, or a stick folder holding mpprov.yaml)')
    .option('--agent-config <file>', 'agent configuration (default $MPPROV_AGENT_CONFIG or /etc/mpprov/agent.yaml)')
    .option('--state-dir <dir>', 'state directory (overrides agent.yaml state_dir)')
    .option(
      '--secrets-record <file>',
      'the secrets record, e.g. one shared by several runners (overrides agent.yaml secrets_record; the key stays in the state directory)',
    )
    .option('--allow-disconnect', 'allow changes to the interface mpprov reaches the device through')
    .option('--discard-pending', 'drop pending changes on the device that mpprov did not make')
    .addOption(
      new Option('--restart-timeout <seconds>', 'how long to wait for a device to come back').argParser(positiveNumber),
    )
    .addOption(
      new Option(
        '--dot1x-grace <seconds>',
        'after a restart, how long an 802.1X port may take to authorize (an address on a dhcp/auto stanza; default 20)',
      ).argParser(positiveNumber),
    )
    .addOption(new Option('--concurrency <n>', 'devices provisioned at once').argParser(positiveNumber))
    .addOption(
      new Option(
        '--update-secrets <when>',
        'when a secret the device already holds is sent again: on_change (unless the secrets record matches; default), on_create (only when the record says it changed), always',
      ).choices(UPDATE_SECRETS_CHOICES),
    )
    .addOption(
      new Option(
        '--lock-wait <seconds>',
        "take a lock file per device in the state directory while changing it, waiting this long for another run's (plan takes none)",
      ).argParser(nonNegativeNumber),
    )
    .option('--json', 'one JSON event per line, after the version line, and a final result object')
    .addOption(
      new Option(
        '--limit <names>',
        'only these monitoring points of the file (their names, comma-separated; repeatable); the whole file is still validated',
      ).argParser(nameList('monitoring point names')),
    )
    .option(
      '--preflight <iface>',
      "first try every 802.1X interface of the stick on this machine's wired port IFACE (agent.yaml preflight.port); stop before any request when the switch refuses it",
    )
    .option(
      ALLOW_UNSIGNED_FLAG,
      "where agent.yaml requires signatures: use an unsigned stick anyway, only if it brings its own admin password for every device it names (said loudly; never for a stick relying on the laptop's passwords, nor for an altered signature)",
    );
}

export function registerApplyCommands(program: Command): void {
  addEngineOptions(
    program
      .command('plan')
      .description('show what apply would change, without changing anything (exit 0: nothing, 2: changes, 1: error)'),
  ).action(async (file: string, flags: ApplyFlags, command: Command) => {
    process.exitCode = await run(file, { ...flags, rollback: true }, true, command);
  });
  addEngineOptions(
    program.command('apply').description('configure every Monitoring Point in the file and verify the result'),
  )
    .option('--no-rollback', 'keep a wrong result instead of rolling back to the previous configuration')
    .action(async (file: string, flags: ApplyFlags, command: Command) => {
      process.exitCode = await run(file, flags, false, command);
    });
}

async function run(target: string, flags: ApplyFlags, dryRun: boolean, command: Command): Promise<number> {
  const json = flags.json === true;
  // Every line this command prints passes the one redactor, knowing the stick's and agent.yaml's
  // secrets, then is shown with its control characters escaped: names and sentences are the
  // stick's and the devices' text (the JSON lines are JSON-escaped instead).
  const redactor = new Redactor();
  const print = (text: string): void => void process.stdout.write(`${visibleLines(redactor.text(text))}\n`);
  const emitJson = (value: unknown): void => print(visibleJson(JSON.stringify(value)));
  const printProblem = (problem: Problem): void =>
    json ? emitJson({ type: 'problem', ...problem }) : print(formatProblem(problem));
  if (json) print(jsonVersionLine());
  // First of all: a signal must end the command at any point, saying where it stopped.
  const progress = createStopProgress(target, dryRun);
  const stop = stopOnSignal({
    where: () => progress.where(),
    say: (line) => void process.stderr.write(`${visibleText(redactor.text(line))}\n`),
  });
  const file = await configFileOf(target);
  const agentFile = agentConfigPath(flags.agentConfig);
  const loaded = await loadAgentConfig(agentFile);
  if (loaded.problems.length > 0) {
    for (const problem of loaded.problems) printProblem(problem);
    return ExitStatus.Failure;
  }
  const agent: AgentConfig = {
    ...loaded.config,
    ...(flags.stateDir === undefined ? {} : { stateDir: flags.stateDir }),
    ...(flags.secretsRecord === undefined ? {} : { secretsRecord: flags.secretsRecord }),
  };
  // Up front, before any request: an unwritable record means every run resends secrets and restarts.
  const recordProblem = await secretsRecordProblem(agent.stateDir, agent.secretsRecord);
  if (recordProblem !== undefined) process.stderr.write(`WARNING: ${recordProblem}\n`);
  // Read and checked once; the engine takes this and reads nothing of the stick again.
  const stick = await validateStick(file, { label: file, agent });
  redactor.add(stickSecrets(stick, agent));
  // --limit names what only the file knows, so it is judged here, before any request: a name the
  // file lacks is a usage error (exit 64 through commander, as every other one), nothing sent.
  const unknownLimit = flags.limit === undefined ? undefined : limitProblem(stick, flags.limit);
  if (unknownLimit !== undefined && stick.model !== undefined)
    command.error(`error: ${unknownLimit}`, { exitCode: ExitStatus.Usage, code: ErrorCode.Usage });

  // agent.yaml's signatures, as the agent honours them: a refused stick gets no request at all.
  const gate = await stickSignatureGate(file, stick, agent, flags.allowUnsigned === true);
  if (!gate.ok) {
    for (const problem of gate.problems) printProblem(problem);
    if (json) emitJson({ type: 'result', file, outcome: StickOutcome.Invalid, devices: [], sentence: gate.sentence });
    else print(`${file}: ${gate.sentence}`);
    return ExitStatus.Failure;
  }
  for (const note of gate.notes) printProblem(note);
  if (gate.warning !== undefined) process.stderr.write(`WARNING: ${visibleText(redactor.text(gate.warning))}\n`);
  if (gate.line !== undefined && json) emitJson({ type: 'signature', sentence: gate.line });
  else if (gate.line !== undefined) print(`signature: ${gate.line}`);

  const port = flags.preflight ?? agent.preflight?.port;
  if (
    port !== undefined &&
    !(await preflightGate(stick, port, flags.limit, {
      json,
      print,
      emitJson,
      file,
      say: (line) => void process.stderr.write(`${visibleText(redactor.text(line))}\n`),
    }))
  )
    return ExitStatus.Failure;

  // A stick let through unsigned on the flag gets no credential the laptop holds: not the
  // service token either, so the engine runs without agent.yaml's service and no post-check asks.
  const skipService = gate.unsignedOnFlag && agent.service !== undefined && !dryRun;
  const { service: _laptopService, ...agentWithoutService } = agent;
  const engineAgent: AgentConfig = skipService ? agentWithoutService : agent;

  // From here on a signal cuts the engine (and the request under way) and waits for its report.
  progress.engineStarted((stick.access ?? []).map((a) => a.name).filter((name) => flags.limit?.includes(name) ?? true));
  stop.immediate = false;
  const display = json || dryRun ? undefined : createProgressDisplay(redactingStdout(redactor));
  const onEvent = (event: ApplyEvent): void => {
    progress.onEvent(event);
    if (json) emitJson(event);
    else if (event.type === 'warning' && dryRun)
      print(`WARNING: ${visibleText(event.device)}: ${visibleText(event.message)}`);
    else if (event.type === 'service-paths-plan')
      for (const path of event.paths) print(`${visibleText(event.device)}: ${visibleText(path.sentence)}`);
    else display?.onEvent(event);
  };
  const onProblem = (problem: Problem): void => {
    if (json) emitJson({ type: 'problem', ...problem });
    else print(formatProblem(problem));
  };

  let result: StickResult;
  try {
    result = await applyStick(stick, {
      agent: engineAgent,
      dryRun,
      allowDisconnect: flags.allowDisconnect === true,
      discardPending: flags.discardPending === true,
      rollback: flags.rollback,
      restartTimeoutMs: (flags.restartTimeout ?? agent.restartTimeoutMs / 1000) * 1000,
      dot1xGraceMs: (flags.dot1xGrace ?? agent.dot1xGraceMs / 1000) * 1000,
      concurrency: flags.concurrency ?? agent.concurrency,
      signal: stop.signal,
      cutRequests: true,
      onEvent,
      onProblem,
      // The record's warnings (unreadable, another key), once; "cannot be read" is left out when
      // the up-front warning already said it cannot be written (one cause, one warning).
      onWarning: (message, kind) => {
        if (kind !== 'unreadable' || recordProblem === undefined)
          process.stderr.write(`WARNING: ${visibleText(redactor.text(message))}\n`);
      },
      ...(flags.limit === undefined ? {} : { limit: flags.limit }),
      ...(skipService ? { serviceUnchecked: UNSIGNED_SERVICE_SENTENCE } : {}),
      ...(flags.updateSecrets === undefined ? {} : { updateSecrets: flags.updateSecrets }),
      ...(flags.lockWait === undefined
        ? {}
        : { deviceLock: { stateDir: agent.stateDir, waitMs: flags.lockWait * 1000, run: `mpprov apply ${file}` } }),
    });
  } finally {
    display?.stop();
  }

  // Taken before the skipped post-checks are noted: a check never made is no unconfirmed device.
  const unconfirmed = dryRun ? [] : notConfirmed(result);
  if (skipService) result = withServiceSkipped(result, stick.model?.monitoring_points ?? []);
  if (json) emitJson({ type: 'result', file, outcome: result.outcome, devices: result.devices });
  else if (dryRun) for (const plan of result.plans) if (plan !== undefined) print(renderPlan(plan));
  if (!json && result.outcome === StickOutcome.Invalid) print(`${file}: INVALID, nothing was sent to any device`);
  else if (!json && !dryRun) print(`RESULT: ${resultWord(result, skipService)}`);
  if (!json) {
    for (const d of result.devices)
      if (skipService && d.service !== undefined) print(`${visibleText(d.device)}: service ${d.service.sentence}`);
    for (const d of unconfirmed)
      print(
        `${visibleText(d.device)}: configured and verified, but NOT CONFIRMED by the monitoring service: ${visibleText(unconfirmedSentence(d))}`,
      );
    for (const d of result.devices)
      for (const path of d.pathsNotChecked ?? []) print(`${visibleText(d.device)}: ${visibleText(path.sentence)}`);
    // The live step list has already said why a device failed; plan has none, so it says it here.
    if (display === undefined)
      for (const d of result.devices)
        if (d.outcome === Outcome.Failed) print(`${visibleText(d.device)}: FAILED: ${visibleText(d.message)}`);
  }

  const signal = stop.received();
  if (signal !== undefined) {
    // The report above says where each device stopped; the sentence sums it up (stderr), and the
    // exit status is 128 + the signal's number.
    if (json) emitJson({ type: 'stopped', signal, sentence: `stopped by ${signal}: ${progress.where()}` });
    stop.finish();
  }
  if (result.outcome === StickOutcome.Invalid || result.outcome === StickOutcome.Failed) return ExitStatus.Failure;
  if (dryRun) return result.plans.some((p) => p?.hasChanges === true) ? ExitStatus.Changes : ExitStatus.Ok;
  return unconfirmed.length > 0 ? ExitStatus.NotConnected : ExitStatus.Ok;
}

/** stdout for the live step list, through the redactor; a terminal stays a terminal. */
function redactingStdout(redactor: Redactor): NodeJS.WritableStream & { isTTY?: boolean; columns?: number } {
  const stream = new Writable({
    // Done at once, so the live lines and the lines printed directly keep their order.
    write(chunk: Buffer | string, _encoding, done) {
      process.stdout.write(redactor.text(chunk.toString()));
      done();
    },
  });
  // columns read live, so the step list is cut to the terminal's width as it is now (resized or not).
  return Object.defineProperty(Object.assign(stream, { isTTY: process.stdout.isTTY === true }), 'columns', {
    get: () => process.stdout.columns,
  });
}

/**
 * The devices the post-check would have asked about (configured and verified: changed or no
 * change), each with a service part saying why it was not, holding the paths the engine said
 * not checked for that reason: nothing was sent to the service.
 */
function withServiceSkipped(
  result: StickResult,
  points: readonly { name?: unknown; service_hostname?: unknown }[],
): StickResult {
  const hostnameOf = (device: string): string => {
    const mp = points.find((p) => p.name === device);
    return typeof mp?.service_hostname === 'string' ? mp.service_hostname : device;
  };
  const devices = result.devices.map((d): DeviceResult => {
    if (d.outcome === Outcome.Failed) return d;
    const { pathsNotChecked: paths, ...rest } = d;
    return {
      ...rest,
      service: {
        kind: UNCHECKED,
        connected: false,
        hostname: hostnameOf(d.device),
        waitedMs: 0,
        polls: 0,
        sentence: UNSIGNED_SERVICE_SENTENCE,
        ...(paths === undefined || paths.length === 0 ? {} : { paths }),
      },
    };
  });
  return { ...result, devices };
}

function serviceWord(device: StickResult['devices'][number], skipped: boolean): string {
  const service = device.service;
  if (service === undefined) {
    const unchecked = device.pathsNotChecked?.length ?? 0;
    return unchecked === 0 ? '' : `, ${unchecked} path${unchecked === 1 ? '' : 's'} not checked`;
  }
  if (skipped) return ', service not checked';
  const paths = pathsWords(service.paths);
  return `${service.connected ? ', connected' : ', NOT connected'}${paths === undefined ? '' : `, ${paths}`}`;
}

/** Why a device configured and verified is not confirmed: its MP, else each path that does not measure. */
function unconfirmedSentence(device: StickResult['devices'][number]): string {
  const service = device.service;
  if (service === undefined) return '';
  if (!service.connected) return service.sentence;
  return (service.paths ?? [])
    .filter((p) => !p.measuring)
    .map((p) => p.sentence)
    .join('; ');
}

function resultWord(result: StickResult, skipped: boolean): string {
  const counts = result.devices
    .map((d) => `${visibleText(d.device)} ${d.outcome}${serviceWord(d, skipped)}`)
    .join(', ');
  switch (result.outcome) {
    case StickOutcome.Changed:
      return `CHANGED (${counts})`;
    case StickOutcome.NoChange:
      return `NO CHANGE (${counts})`;
    default:
      return `FAILED (${counts})`;
  }
}

function nonNegativeNumber(value: string): number {
  const n = Number(value);
  if (!Number.isFinite(n) || n < 0) throw new InvalidArgumentError(`'${value}' is not a number of seconds (0 or more)`);
  return n;
}

function positiveNumber(value: string): number {
  const n = Number(value);
  if (!Number.isFinite(n) || n <= 0) throw new InvalidArgumentError(`'${value}' is not a positive number`);
  return n;
}
