// `mpprov preflight` and the flow's preflight: the stick's 802.1X, VLAN and DHCP tried on the
// laptop's own port. Only this file is public; the rest of src/preflight is internal.
export { DhcpOutcome, Dot1xOutcome, type PreflightReport } from './preflight-report.js';
export { DEFAULT_TIMEOUT_MS, runPreflight } from './run-preflight.js';
export { selectTarget } from './select-target.js';
export { preflightStick } from './preflight-stick.js';
