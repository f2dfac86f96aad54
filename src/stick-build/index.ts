// `mpprov stick build` and `stick diff` (docs/rolling-out.md): an inventory and a template become
// one validated, optionally signed stick per site, as folders, FAT images and sticks.json.
export { buildSticks, STICKS_JSON } from './build-sticks.js';
export { diffBuilds } from './diff-builds.js';
