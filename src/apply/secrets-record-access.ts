import { access, constants, stat } from 'node:fs/promises';
import { dirname, resolve } from 'node:path';
import { secretsRecordPath } from './secrets-record.js';
import { keyFileOf } from './secrets-record-key.js';

/**
 * Whether the secrets record can be written, asked before a run changes anything. When it cannot,
 * nothing fails at once, but no secret is ever remembered: every later run sends every secret
 * again and restarts the device's networking. The technician must hear that up front.
 * With a record of its own (--secrets-record), the key file in the state directory is asked about
 * too: without a lasting key no hash matches next time.
 * Returns a sentence, or undefined when the record (or the folder it would be created in) is writable.
 */
export async function secretsRecordProblem(stateDir: string, recordFile?: string): Promise<string | undefined> {
  const consequence = 'every run sends the secrets again and restarts networking';
  const stateHint = 'give a writable --state-dir (or state_dir in agent.yaml), or run as the agent does (sudo)';
  if (recordFile === undefined) {
    const problem = await writeProblem(secretsRecordPath(resolve(stateDir)));
    return problem === undefined ? undefined : `${problem('the secrets record')}: ${consequence}; ${stateHint}`;
  }
  const file = secretsRecordPath(stateDir, recordFile);
  const recordProblem = await writeProblem(file);
  if (recordProblem !== undefined)
    return `${recordProblem('the secrets record')}: ${consequence}; give a writable --secrets-record (or secrets_record in agent.yaml)`;
  const keyFile = keyFileOf(resolve(stateDir));
  // An existing key is all a run needs of the state directory for the record.
  const keyThere = await access(keyFile, constants.R_OK).then(
    () => true,
    () => false,
  );
  if (keyThere) return undefined;
  const keyProblem = await writeProblem(keyFile);
  return keyProblem === undefined ? undefined : `${keyProblem('the secrets-record key')}: ${consequence}; ${stateHint}`;
}

/** Why `file` cannot be written or created, as a sentence about `what`; undefined when it can. */
async function writeProblem(file: string): Promise<((what: string) => string) | undefined> {
  try {
    await access(file, constants.W_OK);
    return undefined;
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    if (code !== 'ENOENT' && code !== 'ENOTDIR')
      return (what) => `${what} ${file} cannot be written (${code ?? 'error'})`;
  }
  // Not there yet: the nearest folder that exists must let us create what is missing.
  let dir = dirname(file);
  for (;;) {
    try {
      const info = await stat(dir);
      const found = dir;
      if (!info.isDirectory()) return (what) => `${what} cannot be created: ${found} is not a directory`;
      await access(dir, constants.W_OK | constants.X_OK);
      return undefined;
    } catch (error) {
      const code = (error as NodeJS.ErrnoException).code;
      if ((code === 'ENOENT' || code === 'ENOTDIR') && dirname(dir) !== dir) {
        dir = dirname(dir);
        continue;
      }
      const found = dir;
      return (what) => `${what} cannot be created in ${found} (${code ?? 'error'})`;
    }
  }
}
