export {
  CONFIG_FILE_NAMES,
  MAX_CONFIG_BYTES,
  MAX_REFERENCED_BYTES,
  configFileOf,
  fileStickReader,
  findConfigFile,
  readConfigFile,
  readReferencedFile,
  type ReadResult,
  type StickReader,
} from './stick-files.js';
export { MAX_HELD_BYTES, MAX_HELD_TEXT, overBudget, ReadSession } from './read-session.js';
export { describeNonFile, isInside, joinBytes, readInside, type ReadInsideOptions } from './read-inside.js';
export {
  CASE_INSENSITIVE_FSTYPES,
  isCaseInsensitiveMount,
  isUnderMediaRoot,
  mediaMounts,
  mountOf,
  mountPath,
  parseMountinfo,
  readMountTable,
  showPathBytes,
  type MountEntry,
} from './mount-table.js';
export { parseFindmntLine, watchMounts, type MountWatcher, type MountWatcherOptions } from './mount-watcher.js';
// Not re-exported: profiles-watcher.ts (chokidar). Only the agent watches profile folders; it
// imports that module itself, so validate, plan and apply, which read sticks through this index,
// never load chokidar.
export {
  AGENT_OUTPUT_NAMES,
  SNAPSHOT_LIMITS,
  SnapshotError,
  snapshotReader,
  snapshotStick,
  type SnapshotLimits,
  stickLabel,
  type StickSnapshot,
} from './stick-snapshot.js';
