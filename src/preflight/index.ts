export {
  DhcpOutcome,
  Dot1xOutcome,
  EapMethodName,
  portPassed,
  type DhcpResult,
  type Dot1xVerdict,
  type PreflightReport,
} from './preflight-report.js';
export { DEFAULT_TIMEOUT_MS, runPreflight, type PreflightOptions, type PreflightRun } from './run-preflight.js';
export { dot1xInterfaces, selectTarget, type PreflightTarget, type TargetChoice } from './select-target.js';
export { preflightStick, type StickPreflight } from './preflight-stick.js';
