export {
  JobBanner,
  type AgentStatus,
  type StatusDevice,
  type StatusJob,
  type StatusSource,
  type StatusStep,
} from './status-document.js';
export { HEARTBEAT_MS, startStatusPage, type StatusPage, type StatusPageOptions } from './status-server.js';
