import { access, constants, stat } from 'node:fs/promises';
import { dirname, join, resolve } from 'node:path';
import { SECRETS_RECORD_FILE } from './secrets-record.js';

/**
 * Whether the secrets record can be written, asked before a run changes anything. When it cannot,
 * nothing fails at once, but no secret is ever remembered: every later run sends every secret
 * again and restarts the device's networking. The technician must hear that up front.
 * Returns a sentence, or undefined when the record (or the folder it would be created in) is writable.
 */
export async function secretsRecordProblem(stateDir: string): Promise<string | undefined> {
  const file = join(resolve(stateDir), SECRETS_RECORD_FILE);
  const consequence = 'every run sends the secrets again and restarts networking; give a writable --state-dir (or state_dir in agent.yaml), or run as the agent does (sudo)';
  try {
    await access(file, constants.W_OK);
    return undefined;
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== 'ENOENT' && (error as NodeJS.ErrnoException).code !== 'ENOTDIR') {
      return `the secrets record ${file} cannot be written (${(error as NodeJS.ErrnoException).code ?? 'error'}): ${consequence}`;
    }
  }
  // Not there yet: the nearest folder that exists must let us create what is missing.
  let dir = dirname(file);
  for (;;) {
    try {
      const info = await stat(dir);
      if (!info.isDirectory()) return `the secrets record cannot be created: ${dir} is not a directory: ${consequence}`;
      await access(dir, constants.W_OK | constants.X_OK);
      return undefined;
    } catch (error) {
      const code = (error as NodeJS.ErrnoException).code;
      if ((code === 'ENOENT' || code === 'ENOTDIR') && dirname(dir) !== dir) {
        dir = dirname(dir);
        continue;
      }
      return `the secrets record cannot be created in ${dir} (${code ?? 'error'}): ${consequence}`;
    }
  }
}
