export { runDaemon, type DaemonOptions } from './daemon.js';
export { keepJitAtBaseline } from './baseline-jit.js';
export { jobIdSource, newJobId, JOB_ID_PATTERN } from './job-id.js';
export { createDeviceLocks, type DeviceLocks } from './device-locks.js';
export {
  readHistory,
  readMarkers,
  readNotes,
  STATE_FILES,
  type HistoryRecord,
  type JobMarker,
  type PendingNote,
} from './state-store.js';
export { interruptionReason, whereStopped } from './interrupted-jobs.js';
export { readStatus, renderStatus, type JobStatus, type StatusReport } from './job-status.js';
export { stateDirProblem } from './state-dir-access.js';
export { lockStateDir, type StateDirLock } from './state-dir-lock.js';
