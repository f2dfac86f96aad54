export {
  JobBanner,
  type AgentStatus,
  type StatusDevice,
  type StatusJob,
  type StatusSource,
} from './status-document.js';
export { startStatusPage, type ServiceEventLine, type StatusPage } from './status-server.js';
