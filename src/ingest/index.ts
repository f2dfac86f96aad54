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
export { parseFindmntLine, watchMounts, type MountWatcher } from './mount-watcher.js';
// Not re-exported: profiles-watcher.ts (chokidar). Only the agent watches profile folders; it
// imports that module itself, so validate, plan and apply, which read sticks through this index,
// never load chokidar.
export { AGENT_OUTPUT_NAMES, snapshotReader, snapshotStick, stickLabel, type StickSnapshot } from './stick-snapshot.js';
