/**
 * The agent's live status as published in status.json and on the status page's event stream
 * (/work/tools/status-contract.md, `format: 1`): the shape shared by the daemon's job board, the
 * page and `mpprov notify`. Kept here, beside the page that serves it, because the agent imports
 * the page and never the other way round. Every text in it has passed the agent's Redactor.
 */

export const BANNER = {
  working: 'WORKING',
  safeToRemove: 'SAFE TO REMOVE',
  failed: 'FAILED',
  /** A profile job: there is no stick to remove. */
  done: 'DONE',
} as const;
export type Banner = (typeof BANNER)[keyof typeof BANNER];

export interface StatusDevice {
  name: string;
  url: string;
  state: 'waiting' | 'running' | 'done' | 'failed';
  at: string;
}

export interface StatusStep {
  device: string;
  text: string;
  state: 'running' | 'done' | 'failed';
  started: string;
  ended?: string;
}

export interface StatusJob {
  id: string;
  kind: 'stick' | 'profile';
  label: string;
  location: string;
  config: string;
  started: string;
  finished?: string;
  banner: Banner;
  stage: string;
  result?: string;
  summary?: string;
  advice?: string;
  released?: boolean;
  devices: StatusDevice[];
  steps: StatusStep[];
}

export interface StatusDocument {
  format: 1;
  agent: { pid: number; version: string; hostname: string; started: string; stopped: boolean };
  updated: string;
  /** Newest first. */
  jobs: StatusJob[];
}

/** Where the page and the status file get the status from: the daemon's job board. */
export interface StatusSource {
  snapshot(): StatusDocument;
  /** Called on every change; `ended` when a job just ended (the status file writes at once then). */
  subscribe(listener: (change: { ended: boolean }) => void): () => void;
}
