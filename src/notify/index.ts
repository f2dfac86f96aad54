// `mpprov notify`: the per-user desktop companion of the agent. It reads only the agent's status
// file (src/core/agent-status.ts), so it imports nothing but core.
export { runNotify, DEFAULT_STATUS_FILE, type NotifyOptions } from './run-notify.js';
export { announcementFor, type Announcement } from './announcement.js';
export { notifySendArguments } from './notify-send.js';
export { readStatusFile, STATUS_FILE_CAP, type StatusRead } from './read-status-file.js';
