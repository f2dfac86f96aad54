export { formatProblem, summarizeProblems, type ProblemSource } from './format-problems.js';
export { createProgressDisplay, type ProgressDisplay } from './progress-display.js';
export { renderPlan } from './render-plan.js';
// Types only: agent-logger.ts loads winston, which only the agent needs; it imports
// createAgentLogger from that module itself, so the CLI's reports never load winston.
export type { AgentLogger, AgentLoggerOptions, LogLevel } from './agent-logger.js';
export {
  appendDurably,
  appendOverTail,
  replaceDurably,
  type AppendMethod,
  type WriteTarget,
} from '../core/durable-write.js';
export { classifyStickError, StickProblem } from '../core/stick-problem.js';
export { createJobLog, type JobLog, type JobLogOptions } from './job-log.js';
export {
  concludeJob,
  createEventFormatter,
  deviceWords,
  formatInvalidLine,
  formatJobHeader,
  formatJobLine,
  formatLocalTime,
  formatProblemLine,
  formatResultLine,
  resultWord,
  type JobConclusion,
  type JobHeader,
  type LogLine,
  type ResultWord,
} from './job-log-format.js';
export { resultDocument, type ResultDocument } from './result-document.js';
export {
  createUsbLogWriter,
  createWriteQueues,
  RESULT_FILE_NAME,
  stickProblemText,
  USB_LOG_NAME,
  type StickStatus,
  type UsbLogWriter,
  type UsbLogWriterOptions,
} from './usb-log-writer.js';
export {
  busyText,
  RESULT_TXT,
  RESULT_TXT_NAMES,
  resultText,
  resultTxtName,
  writeResultTxt,
  type ResultTxtName,
} from './result-file.js';
