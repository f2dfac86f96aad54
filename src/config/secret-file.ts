import { constants } from 'node:fs';
import { open } from 'node:fs/promises';
import { Secret } from '../core/secret.js';
import { strictUtf8 } from '../core/utf8-text.js';

/** A laptop-side secret file (password, token) is a few bytes; anything larger is not one. */
const MAX_SECRET_FILE_BYTES = 64 * 1024;

/**
 * Reads a secret from a laptop-side file: only a regular file (a FIFO would block the agent, a
 * device would stream forever), at most 64 KiB, one trailing newline dropped, and then one line
 * with no control character: a token or password with a second line or a stray byte would fail
 * every request later, far from its cause. The value is never quoted.
 */
export async function readSecretFile(file: string): Promise<Secret | string> {
  let handle;
  try {
    handle = await open(file, constants.O_RDONLY | constants.O_NONBLOCK);
    const info = await handle.stat();
    if (!info.isFile()) return `secret file ${file} is not a regular file`;
    if (info.size > MAX_SECRET_FILE_BYTES)
      return `secret file ${file} is larger than 64 KiB: it holds no password or token`;
    const buffer = Buffer.alloc(MAX_SECRET_FILE_BYTES + 1);
    const { bytesRead } = await handle.read(buffer, 0, buffer.length, 0);
    if (bytesRead > MAX_SECRET_FILE_BYTES)
      return `secret file ${file} is larger than 64 KiB: it holds no password or token`;
    const value = strictUtf8(buffer.subarray(0, bytesRead))?.replace(/\r?\n$/, '');
    if (value === undefined)
      return `secret file ${file} is not UTF-8 text (a byte such as Latin-1's): save it as UTF-8`;
    if (value === '') return `secret file ${file} is empty`;
    // eslint-disable-next-line no-control-regex
    if (/[\u0000-\u001f\u007f]/.test(value))
      return `secret file ${file} holds more than one line or a control character: it must hold the secret alone, on one line`;
    return new Secret(value);
  } catch (error) {
    return `secret file ${file} cannot be read (${(error as NodeJS.ErrnoException).code ?? 'error'})`;
  } finally {
    await handle?.close();
  }
}
