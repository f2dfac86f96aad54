import { constants } from 'node:fs';
import { open } from 'node:fs/promises';
import { SIGNATURE_LIMITS } from './signature-files.js';

export type AllowedSignersRead = { ok: true; bytes: Buffer } | { ok: false; message: string; hint: string };

/**
 * Reads the laptop's allowed_signers file (agent.yaml `signatures.allowed_signers`). Trusted
 * content, but still opened without blocking (a FIFO there must not hang the agent), checked as a
 * regular file and capped while reading.
 */
export async function readAllowedSigners(file: string): Promise<AllowedSignersRead> {
  const hint = 'list each allowed signer as "PRINCIPAL KEYTYPE BASE64" (ssh-keygen(1), ALLOWED SIGNERS)';
  let handle;
  try {
    handle = await open(file, constants.O_RDONLY | constants.O_NONBLOCK);
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    if (code === 'ENOENT') return { ok: false, message: 'the allowed signers file does not exist', hint };
    if (code === 'EACCES' || code === 'EPERM') return { ok: false, message: 'the allowed signers file cannot be read (permission denied)', hint };
    return { ok: false, message: `the allowed signers file cannot be read (${code ?? 'error'})`, hint };
  }
  try {
    const info = await handle.stat();
    if (!info.isFile()) return { ok: false, message: 'the allowed signers file is not a regular file', hint };
    const limit = SIGNATURE_LIMITS.allowedSignersBytes;
    const buffer = Buffer.alloc(limit + 1);
    let length = 0;
    for (;;) {
      const { bytesRead } = await handle.read(buffer, length, buffer.length - length, length);
      if (bytesRead === 0) break;
      length += bytesRead;
      if (length > limit) return { ok: false, message: 'the allowed signers file is larger than 1 MiB', hint };
    }
    return { ok: true, bytes: buffer.subarray(0, length) };
  } catch (error) {
    return { ok: false, message: `the allowed signers file cannot be read (${(error as NodeJS.ErrnoException).code ?? 'error'})`, hint };
  } finally {
    await handle.close();
  }
}
