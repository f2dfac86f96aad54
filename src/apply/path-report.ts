import type { ConnectionOutcome } from '../service/index.js';

/**
 * What a run says about the paths a stick names (docs/json-output.md, "Paths"): one entry per
 * path, in the stick's order, the same in --json, mpprov-result.json and the status file. The
 * field names and their meaning are stable; `id` and `status` are null when the service never
 * said them (the path was not found or created, or the MP was not confirmed AVAILABLE).
 */
export interface PathReport {
  target: string;
  id: number | null;
  /** Created by this run (it did not exist). */
  created: boolean;
  /** Its data held at least one element since the device's restart (or within the last hour). */
  measuring: boolean;
  /** The path's service quality as the service last said it (SQA_NOT_VIOLATED, INDETERMINATE, ...). */
  status: string | null;
  /** The path's targetLocation when it has one. */
  location?: string;
  /** One sentence for the technician: `path to 192.0.2.80: created, measuring`. */
  sentence: string;
}

/** The per-device `service` object: the post-check's outcome and, when the stick names any, its paths. */
export interface ServiceReport extends ConnectionOutcome {
  paths?: PathReport[];
}

/** A stick's paths that were not looked at, and why (no service configured, the MP not confirmed). */
export function pathsNotChecked(targets: readonly string[], why: string): PathReport[] {
  return targets.map((target) => ({
    target,
    id: null,
    created: false,
    measuring: false,
    status: null,
    sentence: `path to ${target}: ${why}`,
  }));
}

/** `3/3 paths measuring`, `1/2 paths measuring`, or undefined when the stick names none. */
export function pathsWords(paths: readonly PathReport[] | undefined): string | undefined {
  if (paths === undefined || paths.length === 0) return undefined;
  const measuring = paths.filter((p) => p.measuring).length;
  return `${measuring}/${paths.length} path${paths.length === 1 ? '' : 's'} measuring`;
}

/** True when every path the stick names was confirmed measuring (and trivially when it names none). */
export function allPathsMeasuring(service: ServiceReport | undefined): boolean {
  return (service?.paths ?? []).every((p) => p.measuring);
}
