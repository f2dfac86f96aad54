import type { ConnectionOutcome, PathPlanEntry } from '../service/index.js';
import type { PathReport, ServiceReport } from './path-report.js';
import type { AclDiff, StanzaDiff } from './plan-diff.js';

/**
 * What a device's provisioning reports as it goes: the CLI turns these into a live step list or
 * JSON lines, the daemon into usb.log sections. No event carries a secret.
 */

/**
 * The description of the boot window's waiting events (report/job-log-format.ts words them). Here,
 * in a module of types and constants, so the report can name it without loading the engine.
 */
export const MP_BOOTING = 'waiting for the MP to answer';

export const Outcome = { Changed: 'changed', NoChange: 'no-change', Failed: 'failed' } as const;
export type Outcome = (typeof Outcome)[keyof typeof Outcome];

export interface StepRecord {
  index: number;
  description: string;
  status: 'done' | 'failed' | 'skipped';
  elapsedMs: number;
  error?: string;
}

export interface RollbackReport {
  /**
   * `restored`: every stanza back (verified); `partial`: some written back, some keep this run's
   * settings; `none`: nothing could be written back (each changed stanza held a secret the device
   * never returns); `failed`: the roll-back's own requests or restart failed.
   */
  outcome: 'restored' | 'failed' | 'partial' | 'none';
  message: string;
  /** Per stanza the run changed, after a roll-back that ran to its end: what the device holds now. */
  stanzas?: RollbackStanza[];
}

export interface RollbackStanza {
  /** "eth1 inet" */
  stanza: string;
  /** `previous`: its settings before this run; `new`: this stick's (it could not be restored); `none`: removed (new in this run). */
  holds: 'previous' | 'new' | 'none';
  /** What the technician must check, when the device keeps this run's settings. */
  check?: string;
  /** The whole sentence, as the roll-back message says it. */
  says: string;
}

export interface DeviceResult {
  device: string;
  url: string;
  outcome: Outcome;
  /** One sentence: what happened, or what failed and what to check. */
  message: string;
  /** Stable error code when the outcome is failed. */
  code?: string;
  steps: StepRecord[];
  lastSucceededStep?: string;
  rollback?: RollbackReport;
  /** True when the device stopped answering and never came back. */
  deviceLost?: boolean;
  warnings: string[];
  /**
   * Stanzas whose 802.1X was applied but whose authorization the Admin API cannot show (static
   * addresses): never reported as verified. Absent when there are none.
   */
  dot1xNotVisible?: string[];
  /** Interfaces whose switch port (or wireless network) did not authorize this run's 802.1X. */
  dot1xRefused?: string[];
  durationMs: number;
  /** Set when a person stopped the run (SIGTERM, Ctrl-C) and the device's run was cut there. */
  stoppedBy?: string;
  /**
   * The post-check (agent.yaml `service`): whether the monitoring service sees the MP again, and
   * (`paths`) whether the paths its stick names exist and measure. Absent when no service is
   * configured, on a dry run, or when the device failed. Never changes `outcome`: the device's
   * configuration is judged by the Admin API alone.
   */
  service?: ServiceReport;
  /**
   * The stick names paths but no service is configured (or the stick may not use the laptop's):
   * each path, not checked, with the reason in its sentence. Absent otherwise.
   */
  pathsNotChecked?: PathReport[];
}

export type ApplyEvent =
  | { type: 'device-start'; device: string; url: string }
  | {
      type: 'plan';
      device: string;
      steps: string[];
      hasChanges: boolean;
      refusals: string[];
      /** The stanzas that change, before and after, secrets as marks only (plan-diff.ts). */
      diff: StanzaDiff[];
      /** The ACL rules added and removed; empty when the file has no `acl` key or nothing changes. */
      aclDiff: AclDiff[];
    }
  | { type: 'step-start'; device: string; index: number; total: number; description: string }
  | { type: 'step-done'; device: string; index: number; description: string; elapsedMs: number }
  | { type: 'step-failed'; device: string; index: number; description: string; error: string; elapsedMs: number }
  | { type: 'waiting'; device: string; description: string; elapsedMs: number; reason: string }
  | { type: 'warning'; device: string; message: string }
  | { type: 'rollback'; device: string; message: string }
  | { type: 'service-check-start'; device: string; hostname: string; url: string; waitS: number }
  | { type: 'service-waiting'; device: string; hostname: string; elapsedMs: number; reason: string }
  | { type: 'service-check-done'; device: string; outcome: ConnectionOutcome }
  | { type: 'service-paths-start'; device: string; hostname: string; targets: string[]; waitS: number }
  | {
      type: 'service-path';
      device: string;
      target: string;
      id: number | null;
      created: boolean;
      measuring: boolean;
      status: string | null;
      elapsedMs: number;
      sentence: string;
    }
  | { type: 'service-paths-done'; device: string; paths: PathReport[] }
  /** plan only: what would be done with each path, read from the service. */
  | { type: 'service-paths-plan'; device: string; hostname: string; paths: PathPlanEntry[] }
  | { type: 'device-result'; result: DeviceResult };

export type ApplyEventSink = (event: ApplyEvent) => void;
