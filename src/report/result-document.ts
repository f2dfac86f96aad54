import type { DeviceResult, StickResult } from '../apply/index.js';
import type { Problem } from '../config/index.js';
import type { JobConclusion, JobHeader } from './job-log-format.js';

/**
 * mpprov-result.json: the machine-readable twin of a job's usb.log section, one object per job
 * (the newest job on that stick replaces it). Field names are stable; `devices[]` is the engine's
 * own DeviceResult, so the CLI's `--json` and this file describe a device the same way.
 */
export interface ResultDocument {
  format: 1;
  job: string;
  started: string;
  finished: string;
  agent: { version: string; host: string };
  source: { kind: 'stick' | 'profile'; label: string; config: string; config_sha256: string };
  result: JobConclusion['word'];
  summary: string;
  /** The engine's outcome: changed | no-change | failed | invalid, or `not-run`. */
  outcome: string;
  /** True when the agent's shutdown stopped the job. */
  stopped: boolean;
  problems: Problem[];
  devices: DeviceResult[];
}

export function resultDocument(input: {
  header: JobHeader;
  finished: Date;
  conclusion: JobConclusion;
  result?: StickResult;
  stopped: boolean;
}): ResultDocument {
  const { header, result } = input;
  // Written through the job log's redactor (JobLog.writeResult), as every other text of the job.
  return {
    format: 1,
    job: header.jobId,
    started: header.started.toISOString(),
    finished: input.finished.toISOString(),
    agent: { version: header.agentVersion, host: header.hostname },
    source: { kind: header.source, label: header.label, config: header.configName, config_sha256: header.configSha256 },
    result: input.conclusion.word,
    summary: input.conclusion.summary,
    outcome: result?.outcome ?? 'not-run',
    stopped: input.stopped,
    problems: result?.problems ?? [],
    devices: (result?.devices ?? []).filter((d): d is DeviceResult => d !== undefined),
  };
}
