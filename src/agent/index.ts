export { runDaemon } from './daemon.js';
export { holdSignal } from './early-signal.js';
export { keepJitAtBaseline } from './baseline-jit.js';
export { jobIdSource, newJobId, JOB_ID_PATTERN } from './job-id.js';
export { createDeviceLocks } from './device-locks.js';
export { readStatus, renderStatus } from './job-status.js';
export { stateDirProblem } from './state-dir-access.js';
export { lockStateDir } from './state-dir-lock.js';
