import { constants } from 'node:fs';
import { type FileHandle, lstat, open } from 'node:fs/promises';
import { join } from 'node:path';
import { readUpTo } from '../core/read-capped-file.js';
import { describeNonFile } from '../ingest/index.js';
import { MANIFEST_NAME, SIGNATURE_LIMITS, SIGNATURE_NAME } from './signature-files.js';
import { POLICY_MAX_BYTES, POLICY_NAME } from './stick-policy.js';

/**
 * One of the two signature files as found beside a configuration: not there, read, or there but
 * unusable (a link, a FIFO, too large, unreadable). An unusable file is never "no signature":
 * someone put it there, so with allowed signers to check against, the stick is refused for it.
 */
export type SignatureFileRead =
  { state: 'absent' } | { state: 'read'; bytes: Buffer } | { state: 'unusable'; reason: string };

export interface SignatureFiles {
  manifest: SignatureFileRead;
  signature: SignatureFileRead;
  /** mpprov.policy.yaml: it counts only when the signature lists it. */
  policy: SignatureFileRead;
}

/** Reads mpprov.sha256, mpprov.sha256.sig and mpprov.policy.yaml from `dir`, each bounded by its own limit. */
export async function readSignatureFiles(dir: string): Promise<SignatureFiles> {
  return {
    manifest: await readSignatureFile(join(dir, MANIFEST_NAME), SIGNATURE_LIMITS.manifestBytes, '256 KiB'),
    signature: await readSignatureFile(join(dir, SIGNATURE_NAME), SIGNATURE_LIMITS.signatureBytes, '16 KiB'),
    policy: await readSignatureFile(join(dir, POLICY_NAME), POLICY_MAX_BYTES, '4 KiB'),
  };
}

/**
 * The file itself, never what a link names (a link to /dev/zero or to a file elsewhere is not the
 * stick's signature); opened O_NONBLOCK so a FIFO cannot hold the reader, and read to at most
 * `cap` + 1 bytes whatever its size says, so a 1 GiB file costs one fstat.
 */
async function readSignatureFile(file: string, cap: number, capText: string): Promise<SignatureFileRead> {
  try {
    const info = await lstat(file);
    if (info.isSymbolicLink()) return { state: 'unusable', reason: 'it is a link, not the file itself' };
    if (!info.isFile()) return { state: 'unusable', reason: `it is ${describeNonFile(info)}, not a regular file` };
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    if (code === 'ENOENT' || code === 'ENOTDIR') return { state: 'absent' };
    return unreadable(error);
  }
  let handle: FileHandle;
  try {
    handle = await open(file, constants.O_RDONLY | constants.O_NOFOLLOW | constants.O_NONBLOCK);
  } catch (error) {
    // ELOOP: swapped for a link between the look and the open.
    if ((error as NodeJS.ErrnoException).code === 'ELOOP')
      return { state: 'unusable', reason: 'it is a link, not the file itself' };
    return unreadable(error);
  }
  try {
    const info = await handle.stat();
    if (!info.isFile()) return { state: 'unusable', reason: `it is ${describeNonFile(info)}, not a regular file` };
    const tooLarge = (size: number): SignatureFileRead => ({
      state: 'unusable',
      reason: `it is ${size} bytes; the limit is ${capText}`,
    });
    if (info.size > cap) return tooLarge(info.size);
    const bytes = await readUpTo(handle, info.size, cap);
    return bytes.length > cap ? tooLarge(bytes.length) : { state: 'read', bytes };
  } catch (error) {
    return unreadable(error);
  } finally {
    await handle.close().catch(() => undefined);
  }
}

function unreadable(error: unknown): SignatureFileRead {
  const code = (error as NodeJS.ErrnoException).code;
  if (code === 'EACCES' || code === 'EPERM')
    return { state: 'unusable', reason: 'it cannot be read (permission denied)' };
  return { state: 'unusable', reason: `it cannot be read (${code ?? 'error'})` };
}
