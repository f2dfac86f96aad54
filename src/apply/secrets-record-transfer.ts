import { constants } from 'node:fs';
import { open, unlink } from 'node:fs/promises';
import { resolve } from 'node:path';
import {
  exportText,
  keyFileOf,
  keyId,
  parseKeyText,
  readKey,
  readOrCreateKey,
  readSmallFile,
  writeKeyFile,
} from './secrets-record-key.js';

/**
 * Moving the secrets-record key between installations on purpose (`mpprov secrets-record
 * export|import`), so several runners sharing one record hash alike. Only the key moves: the
 * record is shared by its path (--secrets-record), or copied like any file; a file holding both
 * would be a record beside its own key, which is no protection. Outcomes are sentences that name files
 * and key ids, never key bytes.
 */

export type TransferOutcome = { ok: true; sentence: string } | { ok: false; sentence: string };

/**
 * Writes the installation's key to `out` (created 0600 with O_EXCL: never over an existing file,
 * nor through a link). An installation without a key yet gets one now, so a team can start from any runner.
 */
export async function exportKey(stateDir: string, out: string): Promise<TransferOutcome> {
  let key: Buffer;
  try {
    key = await readOrCreateKey(stateDir);
  } catch (error) {
    return {
      ok: false,
      sentence: `the secrets-record key in ${stateDir} cannot be read or created (${codeOf(error)})`,
    };
  }
  const target = resolve(out);
  let handle;
  try {
    handle = await open(
      target,
      constants.O_WRONLY | constants.O_CREAT | constants.O_EXCL | constants.O_NOFOLLOW,
      0o600,
    );
  } catch (error) {
    if (codeOf(error) === 'EEXIST')
      return {
        ok: false,
        sentence: `${target} exists already: mpprov never overwrites a key file (remove it, or name a new file)`,
      };
    return { ok: false, sentence: `${target} cannot be created (${codeOf(error)})` };
  }
  try {
    // The umask may have taken bits away, never added any; chmod makes it exactly 0600 either way.
    await handle.chmod(0o600);
    await handle.writeFile(exportText(key));
  } catch (error) {
    await handle.close().catch(() => undefined);
    await unlink(target).catch(() => undefined);
    return { ok: false, sentence: `${target} could not be written (${codeOf(error)}); nothing was exported` };
  }
  await handle.close();
  return {
    ok: true,
    sentence: `wrote the secrets-record key (key id ${keyId(key)}) to ${target}, mode 0600: whoever holds it can test guesses against the records made with it, so move it like a password, import it with \`mpprov secrets-record import --key-in FILE\` and delete the copy`,
  };
}

/**
 * Makes the key in `file` this installation's. A malformed file is refused with one sentence; a
 * different key already here is replaced only with `replace` (its entries then count as changed).
 */
export async function importKey(stateDir: string, file: string, replace: boolean): Promise<TransferOutcome> {
  const text = await readSmallFile(file);
  if (typeof text !== 'string')
    return { ok: false, sentence: `${file} cannot be read as a key file (${text.code}); nothing was imported` };
  const key = parseKeyText(text);
  if (typeof key === 'string') return { ok: false, sentence: `${file} is refused: ${key}; nothing was imported` };
  const keyFile = keyFileOf(stateDir);
  const current = await readKey(keyFile);
  if (current !== undefined && current.equals(key))
    return { ok: true, sentence: `${keyFile} already holds this key (key id ${keyId(key)}); nothing changed` };
  if (current !== undefined && !replace) {
    return {
      ok: false,
      sentence: `${keyFile} holds another key (key id ${keyId(current)}); give --replace to use the imported one (key id ${keyId(key)}): entries recorded with the current key then count as changed`,
    };
  }
  try {
    await writeKeyFile(stateDir, key);
  } catch (error) {
    return { ok: false, sentence: `${keyFile} cannot be written (${codeOf(error)}); nothing was imported` };
  }
  const replaced =
    current === undefined ? '' : ` (replacing key id ${keyId(current)}: entries recorded with it count as changed)`;
  return {
    ok: true,
    sentence: `imported the secrets-record key (key id ${keyId(key)}) into ${keyFile}${replaced}; records made with it now match here`,
  };
}

function codeOf(error: unknown): string {
  return error instanceof Error && 'code' in error && typeof error.code === 'string' ? error.code : 'error';
}
