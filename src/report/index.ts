export { formatProblem, summarizeProblems, type ProblemSource } from './format-problems.js';
export { createProgressDisplay } from './progress-display.js';
export { renderPlan } from './render-plan.js';
// Types only: agent-logger.ts loads winston, which only the agent needs; it imports
// createAgentLogger from that module itself, so the CLI's reports never load winston.
export type { AgentLogger } from './agent-logger.js';
export { appendDurably, replaceDurably } from '../core/durable-write.js';
export { classifyStickError } from '../core/stick-problem.js';
export { createJobLog, type JobLog } from './job-log.js';
export {
  concludeJob,
  createEventFormatter,
  deviceWords,
  formatInvalidLine,
  formatJobLine,
  formatLocalTime,
  formatProblemLine,
  formatResultLine,
  resultWord,
  type JobConclusion,
  type JobHeader,
} from './job-log-format.js';
export { resultDocument } from './result-document.js';
export {
  createUsbLogWriter,
  createWriteQueues,
  stickProblemText,
  USB_LOG_NAME,
  type StickStatus,
  type UsbLogWriter,
} from './usb-log-writer.js';
export { busyText, RESULT_TXT, resultText, resultTxtName } from './result-file.js';
export { releaseSentence, type StickRelease } from './stick-release.js';
