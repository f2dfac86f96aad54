import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import type { ValidatedStick } from '../certs/index.js';
import type { AgentConfig } from '../config/index.js';
import type { StickSnapshot } from '../ingest/index.js';
import {
  MANIFEST_NAME,
  POLICY_NAME,
  referencedFiles,
  SIGNATURE_NAME,
  type SignatureFileRead,
  signatureVerdict,
  type SignatureVerdict,
} from '../signature/index.js';
import { stickPath } from '../signature/stick-path.js';

/**
 * The job's signature check (docs/stick-format.md, "Signed sticks"), on the snapshot the job already
 * took: the list and its signature from the snapshot's copy, the configuration and certificate
 * files by the hashes validation already computed. Secret `_file`s keep no bytes after
 * validation, so those (and any extra listed file) are read from the snapshot's copy in the job
 * folder, never from the stick again, and only once the signature verified. A signature file the
 * snapshot refused to copy (a link out, a FIFO, too large) was there: it is unusable, not absent.
 */
export async function checkStickSignature(
  agent: AgentConfig,
  snapshot: StickSnapshot,
  stick: ValidatedStick,
  signal?: AbortSignal,
): Promise<SignatureVerdict> {
  const filesByPath = new Map<string, Buffer | string>([[snapshot.configName, stick.sha256]]);
  for (const file of stick.files.values()) filesByPath.set(file.name, file.sha256);
  return signatureVerdict(agent.signatures, {
    files: {
      manifest: await snapshotFile(snapshot, MANIFEST_NAME),
      signature: await snapshotFile(snapshot, SIGNATURE_NAME),
      policy: await snapshotFile(snapshot, POLICY_NAME),
    },
    filesByPath,
    readListed: async (path) => {
      const normal = stickPath(path);
      return normal.ok ? readOptional(join(snapshot.dir, ...normal.path.split('/'))) : undefined;
    },
    configName: snapshot.configName,
    referencedPaths: stick.model === undefined ? [] : referencedFiles(stick.model),
    ...(signal === undefined ? {} : { signal }),
  });
}

async function snapshotFile(snapshot: StickSnapshot, name: string): Promise<SignatureFileRead> {
  const refusal = snapshot.refused.get(name);
  // The snapshot's sentence names the file first ("mpprov.sha256.sig is a FIFO ..."): the reason is the rest.
  if (refusal !== undefined)
    return {
      state: 'unusable',
      reason: refusal.message.startsWith(name) ? `it${refusal.message.slice(name.length)}` : refusal.message,
    };
  const bytes = await readOptional(join(snapshot.dir, name));
  return bytes === undefined ? { state: 'absent' } : { state: 'read', bytes };
}

async function readOptional(file: string): Promise<Buffer | undefined> {
  try {
    return await readFile(file);
  } catch {
    return undefined;
  }
}
