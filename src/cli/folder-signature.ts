import { dirname, join } from 'node:path';
import type { ValidatedStick } from '../certs/index.js';
import { MAX_REFERENCED_BYTES, readInside } from '../ingest/index.js';
import {
  readSignatureFiles,
  referencedFiles,
  type SignaturePolicy,
  signatureVerdict,
  type SignatureVerdict,
} from '../signature/index.js';

/**
 * The agent's signature check (signatureVerdict, the one policy) on a stick folder, for
 * `validate --allowed-signers`, `plan` and `apply`. The configuration and certificate files go
 * in by the hashes validation computed; the two signature files are read bounded and never
 * through a link; other listed files (secret `_file`s, extras) are read from the folder as the
 * agent reads a stick, and only once the signature verified.
 */
export async function checkFolderSignature(
  configFile: string,
  stick: ValidatedStick,
  policy: SignaturePolicy,
): Promise<SignatureVerdict> {
  const dir = dirname(configFile);
  const configName = configFile.slice(dir.length + 1) || configFile;
  const filesByPath = new Map<string, Buffer | string>([[configName, stick.sha256]]);
  for (const file of stick.files.values()) filesByPath.set(file.name, file.sha256);
  return signatureVerdict(policy, {
    files: await readSignatureFiles(dir),
    filesByPath,
    readListed: async (path) => {
      const read = await readInside(dir, path, { what: path, limit: MAX_REFERENCED_BYTES, limitText: '1 MiB' });
      return read.ok ? read.bytes : undefined;
    },
    configName,
    referencedPaths: stick.model === undefined ? [] : referencedFiles(stick.model),
    fileLabel: (name) => join(dir, name),
  });
}
