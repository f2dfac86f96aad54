import { z } from 'zod';

/**
 * The agent's live status file (`status.json` in its runtime directory, format 1), as the
 * contract between the daemon that writes it and the readers (`mpprov notify`, the status page)
 * describes it. It lives in core because the writer (src/agent) and the readers (src/notify) may
 * not import each other: one schema, one type, for every side.
 *
 * Unknown fields are ignored (zod strips them): a newer agent may add fields without breaking an
 * older reader. What the file holds is already redacted by the agent; readers still treat every
 * text in it (labels, device names, summaries come from a stick) as hostile input.
 */

const STATUS_FORMAT = 1;

export const JobBanner = {
  Working: 'WORKING',
  SafeToRemove: 'SAFE TO REMOVE',
  Failed: 'FAILED',
  /** A profile job: there is no stick to remove. */
  Done: 'DONE',
  /** Results written and synced, but the agent could not unmount the stick. */
  UnmountFirst: 'UNMOUNT FIRST',
  /** The stick was pulled (or not writable) before its result was on it. */
  InsertAgain: 'INSERT AGAIN',
} as const;
export type JobBanner = (typeof JobBanner)[keyof typeof JobBanner];

const isoTime = z.string().min(1);

export const StatusDevice = z.object({
  name: z.string(),
  url: z.string().optional(),
  state: z.enum(['waiting', 'running', 'done', 'failed']),
  at: z.string().optional(),
});
export type StatusDevice = z.infer<typeof StatusDevice>;

const StatusStep = z.object({
  device: z.string(),
  text: z.string(),
  state: z.enum(['running', 'done', 'failed']),
  started: isoTime.optional(),
  ended: isoTime.optional(),
});
type StatusStep = z.infer<typeof StatusStep>;

export const StatusJob = z.object({
  id: z.string().min(1),
  kind: z.enum(['stick', 'profile']),
  /** The stick's volume label, or the profile's file name. */
  label: z.string(),
  location: z.string().optional(),
  config: z.string().optional(),
  started: isoTime,
  /** Absent while the job runs. */
  finished: isoTime.optional(),
  banner: z.enum([
    JobBanner.Working,
    JobBanner.SafeToRemove,
    JobBanner.Failed,
    JobBanner.Done,
    JobBanner.UnmountFirst,
    JobBanner.InsertAgain,
  ]),
  stage: z.string().optional(),
  /** The RESULT word (CHANGED, NO CHANGE, OK, FAILED); absent while the job runs. */
  result: z.string().optional(),
  summary: z.string().optional(),
  /** What to do, on failure. */
  advice: z.string().optional(),
  released: z.boolean().optional(),
  /** A stick's: what to do with it now (safe to remove, unmount it first, insert it again). */
  removal: z.string().optional(),
  devices: z.array(StatusDevice),
  /** Devices of the job not listed (a board shows at most 100 per job). */
  omittedDevices: z.number().int().nonnegative().optional(),
  steps: z.array(StatusStep).default([]),
  /** Steps not listed: over the cap while running, or done steps of a finished job. */
  omittedSteps: z.number().int().nonnegative().optional(),
});
export type StatusJob = z.infer<typeof StatusJob>;

const StatusAgent = z.object({
  pid: z.number().int(),
  version: z.string(),
  hostname: z.string(),
  started: isoTime,
  stopped: z.boolean(),
});
type StatusAgent = z.infer<typeof StatusAgent>;

export const AgentStatus = z.object({
  format: z.literal(STATUS_FORMAT),
  agent: StatusAgent,
  updated: isoTime,
  /** Newest first: the running jobs and the last finished ones. */
  jobs: z.array(StatusJob),
});
export type AgentStatus = z.infer<typeof AgentStatus>;

/** A job has ended once its result is written: `finished` is set, or the banner left WORKING. */
export function jobEnded(job: StatusJob): boolean {
  return job.finished !== undefined || job.banner !== JobBanner.Working;
}
