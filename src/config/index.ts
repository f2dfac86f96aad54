export { loadStick, type LoadedStick, type StickFileContent } from './load-stick.js';
export {
  formatKeyPath,
  hasErrors,
  Severity,
  type KeyPath,
  type Problem,
  type UnplacedProblem,
} from '../core/problem.js';
export {
  StickFile,
  stickJsonSchema,
  SUPPORTED_VERSIONS,
  type AclRule,
  type Dot1x,
  type InnerTls,
  type Interface,
  type Ipv4,
  type Ipv6,
  type MonitoringPoint,
  type Route,
  type Tls,
  type Wireless,
} from './schema.js';
export { Secret } from '../core/secret.js';
export { normaliseDeviceUrl, parsePortRange } from './stick-rules.js';
export { parseYaml, placeProblem, type ParsedYaml, type YamlSource } from './yaml-source.js';
export { problemsFromZod } from './zod-issues.js';
export { canonicalIp, ipFamily, ipv4PrefixToNetmask, parseCidr } from './ip-address.js';
export {
  AgentConfigFile,
  agentConfigPath,
  agentSecrets,
  DEFAULT_AGENT_CONFIG_PATH,
  DEFAULT_WAIT_CONNECTED_S,
  defaultAgentConfig,
  loadAgentConfig,
  type AgentConfig,
  type AgentServiceSettings,
  type DeviceDefaults,
  type LoadedAgentConfig,
} from './agent-config.js';
export { resolveDeviceAccess, type DeviceAccess } from './device-access.js';
export { parseListen, type ListenAddress } from './loopback-listen.js';
