import { stat } from 'node:fs/promises';
import { resolve } from 'node:path';
import { runSshKeygen } from './run-ssh-keygen.js';

/**
 * The signing key as `ssh-keygen -l` prints it: `SHA256:...` and its comment (the signer a build's
 * sticks.json names), or why it could not be read. ssh-keygen reads the public half of a private
 * key without its passphrase, so this never asks for one.
 */
export async function keyFingerprint(
  keyFile: string,
): Promise<{ ok: true; signer: string } | { ok: false; message: string }> {
  // A mistyped path is said as such: ssh-keygen would only say it cannot read a key there.
  const missing = await stat(keyFile).then(
    (info) => (info.isFile() ? undefined : `${keyFile} is not a file: give the signing key's file`),
    (error: NodeJS.ErrnoException) =>
      error.code === 'ENOENT' ? `there is no key file ${keyFile}` : `the key cannot be read (${error.code ?? 'error'})`,
  );
  if (missing !== undefined) return { ok: false, message: missing };
  const listed = await runSshKeygen(['-l', '-f', resolve(keyFile)], { timeoutMs: 10_000 });
  if (!listed.ran) return { ok: false, message: `the key could not be read: ${listed.detail}` };
  const line = listed.stdout.trim().split('\n')[0] ?? '';
  const match = /^\d+ (SHA256:[A-Za-z0-9+/=]+) ?(.*?)(?: \([A-Z0-9-]+\))?$/.exec(line);
  if (listed.exitCode !== 0 || match === null)
    return {
      ok: false,
      message:
        'ssh-keygen cannot read this as an SSH key (give the private key, or its .pub with the key in ssh-agent)',
    };
  const comment = (match[2] ?? '').replace(/[^\x20-\x7e]/g, '?');
  return {
    ok: true,
    signer: comment === '' || comment === 'no comment' ? (match[1] as string) : `${match[1]} ${comment}`,
  };
}
