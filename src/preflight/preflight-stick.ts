import type { StickFile, StickFileContent } from '../config/index.js';
import { Dot1xOutcome, type PreflightReport } from './preflight-report.js';
import { runPreflight } from './run-preflight.js';
import { dot1xInterfaces, selectTarget } from './select-target.js';

/** The flow's preflight of a whole stick on one port: every report, and the verdict for the run. */
export interface StickPreflight {
  reports: PreflightReport[];
  /** Every 802.1X interface's port accepted it: the run may go on to the devices. */
  passed: boolean;
  /** One sentence for usb.log, the result and the terminal: what the switch said. */
  sentence: string;
}

/**
 * `plan`/`apply --preflight IFACE` and agent.yaml `preflight: {port}`: every wired 802.1X
 * interface of the stick (of the Monitoring Points `limit` keeps) tried on the laptop's `port`,
 * one after the other, before any request to a device. The caller stops when it did not pass.
 */
export async function preflightStick(
  stick: { model: StickFile; files: ReadonlyMap<string, StickFileContent> },
  port: string,
  options: { timeoutMs?: number; say?: (line: string) => void; limit?: readonly string[] } = {},
): Promise<StickPreflight> {
  const reports: PreflightReport[] = [];
  const failed: string[] = [];
  for (const mp of stick.model.monitoring_points) {
    if (options.limit !== undefined && !options.limit.includes(mp.name)) continue;
    for (const name of dot1xInterfaces(mp)) {
      const choice = selectTarget(stick.model, { monitoringPoint: mp.name, interface: name });
      if (!('target' in choice)) continue;
      const run = await runPreflight({
        port,
        target: choice.target,
        files: stick.files,
        ...(options.timeoutMs === undefined ? {} : { timeoutMs: options.timeoutMs }),
        ...(options.say === undefined ? {} : { say: options.say }),
      });
      reports.push(run.report);
      if (!run.passed) failed.push(`${mp.name} ${name}: ${whatTheSwitchSaid(run.report)}`);
    }
  }
  if (reports.length === 0)
    return { reports, passed: true, sentence: `preflight on ${port}: the stick has no wired 802.1X interface to try` };
  if (failed.length === 0)
    return {
      reports,
      passed: true,
      sentence: `preflight on ${port}: the switch accepted ${reports.map((r) => `${r.monitoring_point ?? '?'} ${r.interface ?? '?'} (${r.dot1x.method ?? '802.1X'})`).join(', ')}`,
    };
  return {
    reports,
    passed: false,
    sentence: `preflight on ${port} refused the stick, nothing was sent to any Monitoring Point: ${failed.join('; ')}`,
  };
}

function whatTheSwitchSaid(report: PreflightReport): string {
  const accepted = report.dot1x.outcome === Dot1xOutcome.Authenticated;
  if (!accepted) return `802.1X ${report.dot1x.outcome}: ${report.dot1x.cause}`;
  return report.problems.join('; ') || `the port did not give what the stick expects (DHCP ${report.dhcp.outcome})`;
}
