import type { AgentStatus } from '../core/agent-status.js';

/**
 * The agent's live status as published in status.json and on the status page's event stream
 * (`format: 1`): one schema and type in core/agent-status.ts, shared by the daemon's job board,
 * this page and `mpprov notify`. Every text in it has passed the agent's Redactor.
 */
export { JobBanner, type AgentStatus, type StatusDevice, type StatusJob } from '../core/agent-status.js';

/** Where the page and the status file get the status from: the daemon's job board. */
export interface StatusSource {
  snapshot(): AgentStatus;
  /** Called on every change; `ended` when a job just ended (the status file writes at once then). */
  subscribe(listener: (change: { ended: boolean }) => void): () => void;
}
