import { packageVersion } from './package-version.js';

/**
 * The format of mpprov's JSON-lines outputs (`plan`/`apply --json`, `service status --json`). A
 * program reading them checks the first line, `{"type":"version","format":1,"mpprov":"X.Y.Z"}`,
 * before anything else: `format` changes only when a line it knows changes meaning (new line
 * types and new fields are not a new format).
 */
const JSON_FORMAT = 1;

export function jsonVersionLine(): string {
  return JSON.stringify({ type: 'version', format: JSON_FORMAT, mpprov: packageVersion() });
}
