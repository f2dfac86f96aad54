import { secondsText } from '../core/errors.js';
import { statusText } from './connection-outcome.js';

/** What mpprov made sure of for one of an MP's paths, as data and one sentence for the technician. */

export interface WantedPath {
  /** A host name or an address (stick-format.md, "Network paths"). */
  target: string;
  /** The path's targetLocation, set after creation when given and different. */
  location?: string | undefined;
}

export interface PathOutcome {
  target: string;
  /** The service's id, once the path is found or created. */
  id?: number | undefined;
  /** Created by this call (not found existing). */
  created: boolean;
  /** Its data held at least one element since the time asked for. */
  measuring: boolean;
  /** The service quality the service last said: SQA_NOT_VIOLATED, INDETERMINATE, ... */
  status?: string | undefined;
  /** The targetLocation the path has now, when it has one. */
  location?: string | undefined;
  sentence: string;
}

export interface PathProgress {
  target: string;
  id?: number | undefined;
  created: boolean;
  measuring: boolean;
  status?: string | undefined;
  elapsedMs: number;
  /** What is happening now, one sentence. */
  sentence: string;
}

export const NO_ORGANIZATION =
  "cannot be created: the service did not say the MP's organization; set service.org_id in agent.yaml";

/** `path to 192.0.2.80` */
export const pathName = (target: string): string => `path to ${statusText(target)}`;

export function measuringSentence(
  facts: { target: string; created: boolean; measuring: boolean; status?: string | undefined },
  waitedMs: number,
): string {
  const how = facts.created ? 'created' : 'exists';
  const said = facts.status === undefined ? '' : ` (the service says ${statusText(facts.status)})`;
  if (facts.measuring) return `${pathName(facts.target)}: ${how}, measuring${said}`;
  return `${pathName(facts.target)}: ${how}, not measuring after ${secondsText(waitedMs)}: no data since the restart${said}`;
}
