import { z } from 'zod';
import { AgentStatus, StatusJob } from '../core/agent-status.js';
import { readCappedFile } from '../core/read-capped-file.js';

/** A status file larger than this is not the agent's (20 jobs with their steps stay far below). */
export const STATUS_FILE_CAP = 1024 * 1024;

export type StatusRead =
  | {
      ok: true;
      status: AgentStatus;
      /** One sentence per job that did not match the contract (skipped). */ skipped: string[];
    }
  | {
      ok: false;
      /** Why there is nothing to read yet; `missing-dir`/`missing-file` are normal before the agent starts. */ reason:
        'missing-dir' | 'missing-file' | 'unreadable' | 'invalid';
      problem: string;
    };

// Each job is checked on its own: one job the reader does not understand must not hide the others.
const StatusEnvelope = AgentStatus.extend({ jobs: z.array(z.unknown()) });

/**
 * Reads and checks the status file, never more than `cap` bytes of it, and never throws: a
 * missing, half-written, oversized or malformed file is a reason to wait and read again. Opened
 * non-blocking so a FIFO put in its place cannot hang the reader.
 */
export async function readStatusFile(path: string, cap = STATUS_FILE_CAP): Promise<StatusRead> {
  const read = await readCappedFile(path, cap);
  if (!read.ok) {
    if (read.why === 'not-regular')
      return { ok: false, reason: 'unreadable', problem: `${path} is not a regular file` };
    if (read.why === 'too-large')
      return {
        ok: false,
        reason: 'invalid',
        problem: `${path} is larger than ${cap} bytes: not the agent's status file`,
      };
    if (read.code === 'ENOENT')
      return {
        ok: false,
        reason: 'missing-file',
        problem: `${path} does not exist (yet): is the agent (mpprov.service) running?`,
      };
    if (read.code === 'EACCES' || read.code === 'EPERM')
      return { ok: false, reason: 'unreadable', problem: `cannot read ${path}: permission denied` };
    return { ok: false, reason: 'unreadable', problem: `cannot read ${path}: ${read.code ?? 'error'}` };
  }
  const text = read.bytes.toString('utf8');
  let json: unknown;
  try {
    json = JSON.parse(text);
  } catch {
    return {
      ok: false,
      reason: 'invalid',
      problem: `${path} is not valid JSON (${text.length === 0 ? 'empty' : 'half-written or damaged'})`,
    };
  }
  const envelope = StatusEnvelope.safeParse(json);
  if (!envelope.success)
    return {
      ok: false,
      reason: 'invalid',
      problem: `${path} is not an mpprov status file of format 1: ${issueText(envelope.error)}`,
    };
  const jobs: StatusJob[] = [];
  const skipped: string[] = [];
  envelope.data.jobs.forEach((raw, index) => {
    const job = StatusJob.safeParse(raw);
    if (job.success) jobs.push(job.data);
    else
      skipped.push(
        `${path}: job ${jobName(raw, index)} skipped, it does not match the status format: ${issueText(job.error)}`,
      );
  });
  return { ok: true, status: { ...envelope.data, jobs }, skipped };
}

/** The job's id when it has one (stable across rewrites, so the warning is given once), else its place. */
function jobName(raw: unknown, index: number): string {
  const id = typeof raw === 'object' && raw !== null ? (raw as { id?: unknown }).id : undefined;
  return typeof id === 'string' && id.length > 0 ? JSON.stringify(id.slice(0, 80)) : `#${index + 1}`;
}

/** The first issue as `path: message`, enough to find what is wrong without flooding the log. */
function issueText(error: z.ZodError): string {
  const issue = error.issues[0];
  if (issue === undefined) return 'unknown problem';
  const at = issue.path.length === 0 ? '(top)' : issue.path.map(String).join('.');
  return `${at}: ${issue.message}`;
}
