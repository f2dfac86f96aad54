export {
  MAX_CONFIG_BYTES,
  MAX_REFERENCED_BYTES,
  configFileOf,
  fileStickReader,
  findConfigFile,
  readConfigFile,
  readReferencedFile,
  type StickReader,
} from './stick-files.js';
export { overBudget, ReadSession } from './read-session.js';
export { describeNonFile, joinBytes, readInside } from './read-inside.js';
export {
  isCaseInsensitiveMount,
  isUnderMediaRoot,
  mediaMounts,
  mountOf,
  mountPath,
  parseMountinfo,
  readMountTable,
  type MountEntry,
} from './mount-table.js';
// Not re-exported: mount-watcher.ts (findmnt through node:child_process and node:readline) and
// profiles-watcher.ts (chokidar). Only the agent watches mounts and profile folders; it imports
// those modules itself, so validate, plan and apply, which read sticks through this index, load
// neither (about 4 ms of every start for the first).
export { AGENT_OUTPUT_NAMES, snapshotReader, snapshotStick, stickLabel, type StickSnapshot } from './stick-snapshot.js';
