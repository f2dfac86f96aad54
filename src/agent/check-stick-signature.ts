import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import type { ValidatedStick } from '../certs/index.js';
import type { AgentConfig, Problem } from '../config/index.js';
import type { StickSnapshot } from '../ingest/index.js';
import {
  describeSignature,
  MANIFEST_NAME,
  referencedFiles,
  SIGNATURE_NAME,
  SignatureStatus,
  signatureProblems,
  verifyStickSignature,
} from '../signature/index.js';
import { stickPath } from '../signature/stick-path.js';

export interface SignatureVerdict {
  /** One line for usb.log, or undefined when there is nothing worth saying (unsigned, not required). */
  line: string | undefined;
  /** Non-empty: the whole job is refused before any device request. */
  problems: Problem[];
}

/**
 * The job's signature check (docs/stick-format.md, "Signed sticks"), on the snapshot the job already
 * took: the list and its signature from the snapshot's copy, the configuration and certificate
 * files by the hashes validation already computed. Secret `_file`s keep no bytes after
 * validation, so those (and any extra listed file) are read from the snapshot's copy in the job
 * folder, never from the stick again, and only once the signature verified.
 */
export async function checkStickSignature(
  agent: AgentConfig,
  snapshot: StickSnapshot,
  stick: ValidatedStick,
  signal?: AbortSignal,
): Promise<SignatureVerdict> {
  const manifestBytes = await readOptional(join(snapshot.dir, MANIFEST_NAME));
  const signatureBytes = await readOptional(join(snapshot.dir, SIGNATURE_NAME));
  const { required, allowedSigners } = agent.signatures;
  if (allowedSigners === undefined) {
    // Without allowed signers nothing can be verified; config load refuses required:true then.
    if (signatureBytes === undefined) return { line: undefined, problems: [] };
    return { line: `signature not checked: agent.yaml has no signatures.allowed_signers`, problems: [] };
  }
  const filesByPath = new Map<string, Buffer | string>([[snapshot.configName, stick.sha256]]);
  for (const file of stick.files.values()) filesByPath.set(file.name, file.sha256);
  const result = await verifyStickSignature({
    manifestBytes,
    signatureBytes,
    allowedSignersFile: allowedSigners,
    filesByPath,
    readListed: async (path) => {
      const normal = stickPath(path);
      return normal.ok ? readOptional(join(snapshot.dir, ...normal.path.split('/'))) : undefined;
    },
    configName: snapshot.configName,
    referencedPaths: stick.model === undefined ? [] : referencedFiles(stick.model),
    ...(signal === undefined ? {} : { signal }),
  });
  const problems = signatureProblems(result, required);
  if (result.status === SignatureStatus.Unsigned && !required) return { line: undefined, problems };
  return { line: describeSignature(result), problems };
}

async function readOptional(file: string): Promise<Buffer | undefined> {
  try {
    return await readFile(file);
  } catch {
    return undefined;
  }
}
