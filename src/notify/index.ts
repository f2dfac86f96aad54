// `mpprov notify`: the per-user desktop companion of the agent. It reads only the agent's status
// file (src/core/agent-status.ts), so it imports nothing but core.
export { runNotify, DEFAULT_STATUS_FILE } from './run-notify.js';
export { announcementFor } from './announcement.js';
export { readStatusFile } from './read-status-file.js';
