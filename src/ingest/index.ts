export {
  CONFIG_FILE_NAMES,
  MAX_CONFIG_BYTES,
  MAX_REFERENCED_BYTES,
  findConfigFile,
  readConfigFile,
  readReferencedFile,
  type ReadResult,
} from './stick-files.js';
