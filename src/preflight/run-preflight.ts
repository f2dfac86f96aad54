import type { StickFileContent } from '../config/index.js';
import { preflightHolding, removeAbandonedRuns } from './abandoned-runs.js';
import { judgeFit, type PortAddress } from './address-fit.js';
import { requestLease } from './dhcp-client.js';
import { gatewayAnswers } from './gateway-probe.js';
import { closePortNamespace, ipIn, openPortNamespace, type PortSession } from './port-namespace.js';
import { portNameProblem } from './port-name.js';
import {
  DhcpOutcome,
  Dot1xOutcome,
  portPassed,
  type DhcpResult,
  type Dot1xVerdict,
  type PreflightReport,
} from './preflight-report.js';
import { runSupplicant } from './run-supplicant.js';
import type { PreflightTarget } from './select-target.js';
import { eapMethodOf } from './supplicant-config.js';
import { findPreflightTools, firstLine, runCommand } from './system-commands.js';
import { vlanAddArgs, vlanLinkName, vlanRefusal } from './vlan-link.js';

export const DEFAULT_TIMEOUT_MS = 30_000;
/** ARP needs a second or two, not the 30 s a switch's 802.1X or DHCP may take. */
const GATEWAY_PROBE_MS = 3_000;

export interface PreflightOptions {
  /** The laptop's wired interface, plugged into the switch port the MP's interface will use. */
  port: string;
  target: PreflightTarget;
  /** The stick's certificate and key files, by key path (ValidatedStick.files). */
  files: ReadonlyMap<string, StickFileContent>;
  /** Bounds the 802.1X verdict and, separately, DHCP. */
  timeoutMs?: number;
  /** Progress, one line each (stderr): where a run is when it is stopped. */
  say?: (line: string) => void;
}

export interface PreflightRun {
  report: PreflightReport;
  /** The port accepted the stick's settings: exit 0, and the flow may go on to the device. */
  passed: boolean;
  /** The command line named a port this machine does not have: a usage error, nothing was tried. */
  usage?: string;
}

/**
 * `mpprov preflight` on one port: cleans up after a killed run, takes the port into a namespace
 * of its own, tries the stick's 802.1X there with the laptop's wpa_supplicant, then (when the port
 * accepted it) the VLAN, DHCP or the static address and the gateway, and gives the port back as
 * it was. Nothing is sent to the Monitoring Point. Never throws for what the port does.
 */
export async function runPreflight(options: PreflightOptions): Promise<PreflightRun> {
  const { port, target } = options;
  const timeoutMs = options.timeoutMs ?? DEFAULT_TIMEOUT_MS;
  const say = options.say ?? (() => undefined);
  const method = target.dot1x === undefined ? undefined : eapMethodOf(target.dot1x.block);
  const report: PreflightReport = {
    port,
    monitoring_point: target.monitoringPoint,
    interface: target.interfaceName,
    dot1x: { outcome: Dot1xOutcome.Error, ...(method === undefined ? {} : { method }), cause: 'not tried' },
    dhcp: { outcome: DhcpOutcome.Skipped },
    gateway_answers: null,
    fits: null,
    problems: [],
  };
  const usesDhcp = target.iface.ipv4?.method === 'dhcp';
  const expectation = { usesDhcp, notTried: false };
  const badName = portNameProblem(port);
  if (badName !== undefined) {
    report.dot1x.cause = badName;
    report.problems.push(badName);
    return { report, passed: false, usage: badName };
  }
  const found = findPreflightTools();
  if ('missing' in found) {
    report.dot1x.cause = found.missing;
    report.problems.push(found.missing);
    return { report, passed: false };
  }
  if (process.getuid?.() !== 0) {
    report.dot1x.cause =
      'preflight needs root: it moves the port into a network namespace of its own and runs wpa_supplicant';
    report.problems.push(report.dot1x.cause);
    return { report, passed: false };
  }
  // First: a killed run may hold the very port asked for, inside its namespace.
  for (const sentence of await removeAbandonedRuns(found.tools.ip)) {
    say(sentence);
    report.problems.push(sentence);
  }
  if ((await runCommand(found.tools.ip, ['link', 'show', 'dev', port])).code !== 0) {
    const busy = await busyPort(found.tools.ip, port);
    if (busy !== undefined) {
      report.dot1x.cause = busy;
      report.problems.push(busy);
      return { report, passed: false };
    }
    const usage = `this laptop has no interface ${JSON.stringify(port)}`;
    report.dot1x.cause = usage;
    report.problems.push(usage);
    return { report, passed: false, usage };
  }

  let session: PortSession;
  try {
    say(`taking ${port} into a network namespace of its own`);
    session = await openPortNamespace(port, found.tools);
  } catch (error) {
    // Another preflight may have taken the port between the look above and the move.
    report.dot1x.cause =
      (await busyPort(found.tools.ip, port)) ?? `the port could not be taken: ${(error as Error).message}`;
    report.problems.push(report.dot1x.cause);
    return { report, passed: false };
  }
  try {
    report.dot1x = await tryDot1x(session, options, timeoutMs, say);
    if (report.dot1x.outcome === Dot1xOutcome.Authenticated || report.dot1x.outcome === Dot1xOutcome.NotConfigured) {
      await tryAddressing(session, options, timeoutMs, say, report, expectation);
    } else {
      report.problems.push(`802.1X: ${report.dot1x.cause}`);
    }
  } catch (error) {
    report.problems.push(`the preflight failed: ${(error as Error).message}`);
    expectation.notTried = true;
  } finally {
    say(`giving ${port} back as it was`);
    for (const failure of await closePortNamespace(session)) report.problems.push(failure);
  }
  return { report, passed: portPassed(report, expectation) };
}

/** The sentence when another preflight holds `port` now: one of them moves it, never both. */
async function busyPort(ip: string, port: string): Promise<string | undefined> {
  const pid = await preflightHolding(ip, port);
  return pid === undefined
    ? undefined
    : `another preflight (process ${pid}) is trying ${port} now: run this one once it has given the port back`;
}

async function tryDot1x(
  session: PortSession,
  options: PreflightOptions,
  timeoutMs: number,
  say: (line: string) => void,
): Promise<Dot1xVerdict> {
  const { target } = options;
  if (target.dot1x === undefined)
    return { outcome: Dot1xOutcome.NotConfigured, cause: `the stick gives ${target.interfaceName} no 802.1X` };
  say(`802.1X: trying ${eapMethodOf(target.dot1x.block)} on ${options.port} (up to ${Math.round(timeoutMs / 1000)} s)`);
  const run = await runSupplicant(session, options.port, { ...target, dot1x: target.dot1x }, options.files, timeoutMs);
  say(`802.1X: ${run.verdict.outcome}: ${run.verdict.cause}`);
  return run.verdict;
}

async function tryAddressing(
  session: PortSession,
  options: PreflightOptions,
  timeoutMs: number,
  say: (line: string) => void,
  report: PreflightReport,
  expectation: { notTried: boolean },
): Promise<void> {
  const { target, port } = options;
  let device = port;
  if (target.vlan !== undefined) {
    const made = await ipIn(session, vlanAddArgs(port, target.vlan.id));
    if (made.code !== 0) {
      expectation.notTried = true;
      report.problems.push(vlanRefusal(made.stderr, port, target.vlan.id));
      return;
    }
    device = vlanLinkName(target.vlan.id);
    await ipIn(session, ['link', 'set', device, 'up']);
  }
  const ipv4 = target.iface.ipv4;
  let given: PortAddress | undefined;
  if (ipv4?.method === 'dhcp') {
    say(`DHCP: asking on ${device} (up to ${Math.round(timeoutMs / 1000)} s)`);
    const lease = await requestLease(session, device, timeoutMs);
    if (lease === undefined || 'unusable' in lease) {
      report.dhcp = { outcome: DhcpOutcome.NoAnswer };
      report.problems.push(
        lease === undefined
          ? `DHCP: no server answered on ${device} within ${Math.round(timeoutMs / 1000)} s`
          : `DHCP: a server answered on ${device}, but its lease is not usable: ${lease.unusable}`,
      );
      return;
    }
    const dhcp: DhcpResult = {
      outcome: DhcpOutcome.Address,
      address: `${lease.address}/${lease.prefix}`,
      ...(lease.gateway === undefined ? {} : { gateway: lease.gateway }),
      dns: lease.dns,
    };
    report.dhcp = dhcp;
    given = {
      address: lease.address,
      prefix: lease.prefix,
      ...(lease.gateway === undefined ? {} : { gateway: lease.gateway }),
    };
  } else if (ipv4?.method === 'static' && ipv4.address !== undefined) {
    const [address = '', prefix = '32'] = ipv4.address.split('/');
    given = { address, prefix: Number(prefix), ...(ipv4.gateway === undefined ? {} : { gateway: ipv4.gateway }) };
  }
  if (given === undefined) return;
  const added = await ipIn(session, ['addr', 'add', `${given.address}/${given.prefix}`, 'dev', device]);
  if (added.code !== 0) {
    report.problems.push(`could not set ${given.address}/${given.prefix} on ${device}: ${firstLine(added.stderr)}`);
    return;
  }
  if (given.gateway !== undefined) {
    say(`gateway: asking ${given.gateway} on ${device}`);
    report.gateway_answers = await gatewayAnswers(session, device, given.gateway, GATEWAY_PROBE_MS);
    if (!report.gateway_answers && ipv4?.method === 'dhcp')
      report.problems.push(`the gateway ${given.gateway} did not answer ARP on ${device}`);
  }
  const fit = judgeFit(target.iface, given, report.gateway_answers, target.managementHost);
  report.fits = fit.fits;
  report.problems.push(...fit.problems);
}
