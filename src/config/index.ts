export { loadStick, type LoadedStick, type StickFileContent } from './load-stick.js';
export { formatKeyPath, hasErrors, Severity, type KeyPath, type Problem } from '../core/problem.js';
export {
  STICK_KEYS,
  STICK_SECRET_KEYS,
  StickFile,
  stickJsonSchema,
  type InnerTls,
  type Interface,
  type Ipv4,
  type Ipv6,
} from './schema.js';
export { Secret } from '../core/secret.js';
export { normaliseDeviceUrl, parsePortRange } from './stick-rules.js';
export { canonicalIp, ipv4PrefixToNetmask, parseCidr } from './ip-address.js';
export {
  AgentConfigFile,
  agentConfigPath,
  agentSecrets,
  defaultAgentConfig,
  loadAgentConfig,
  type AgentConfig,
} from './agent-config.js';
export { resolveDeviceAccess, type DeviceAccess } from './device-access.js';
export { parseListen, type ListenAddress } from './loopback-listen.js';
export { DEFAULT_WAIT_MEASURING_S, type AgentServiceEvents, type AgentServiceSettings } from './agent-service.js';
export { PATHS_NOT_CHECKED, pathsWithoutService } from './paths-without-service.js';
export { sameSubnet } from './ip-address.js';
export { secretKeyTest } from './secret-spans.js';
