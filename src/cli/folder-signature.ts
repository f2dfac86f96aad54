import { readFile } from 'node:fs/promises';
import { dirname, join } from 'node:path';
import type { ValidatedStick } from '../certs/index.js';
import type { Problem } from '../config/index.js';
import {
  describeSignature,
  MANIFEST_NAME,
  referencedFiles,
  SIGNATURE_NAME,
  signatureProblems,
  verifyStickSignature,
} from '../signature/index.js';
import { stickPath } from '../signature/stick-path.js';

export interface FolderSignature {
  /** One line: `signed by PRINCIPAL (...)`, `not signed`, or `signature ... refused`. */
  line: string;
  /** Located problems of a refused signature (an unsigned folder is not one: it is only said). */
  problems: Problem[];
  summary: { status: string; principal?: string };
}

/**
 * `mpprov validate --allowed-signers`: the same check the agent makes, on a folder. The
 * configuration and certificate files go in by the hashes validation computed; other listed
 * files (secret `_file`s, extras) are read from the folder once the signature verified.
 */
export async function checkFolderSignature(
  configFile: string,
  stick: ValidatedStick,
  allowedSigners: string,
): Promise<FolderSignature> {
  const dir = dirname(configFile);
  const configName = configFile.slice(dir.length + 1) || configFile;
  const filesByPath = new Map<string, Buffer | string>([[configName, stick.sha256]]);
  for (const file of stick.files.values()) filesByPath.set(file.name, file.sha256);
  const result = await verifyStickSignature({
    manifestBytes: await readOptional(join(dir, MANIFEST_NAME)),
    signatureBytes: await readOptional(join(dir, SIGNATURE_NAME)),
    allowedSignersFile: allowedSigners,
    filesByPath,
    readListed: async (path) => {
      const normal = stickPath(path);
      return normal.ok ? readOptional(join(dir, ...normal.path.split('/'))) : undefined;
    },
    configName,
    referencedPaths: stick.model === undefined ? [] : referencedFiles(stick.model),
    fileLabel: (name) => join(dir, name),
  });
  return {
    line: describeSignature(result),
    problems: signatureProblems(result, false),
    summary: {
      status: result.status,
      ...(result.status === 'unsigned' || result.principal === undefined ? {} : { principal: result.principal }),
    },
  };
}

async function readOptional(file: string): Promise<Buffer | undefined> {
  try {
    return await readFile(file);
  } catch {
    return undefined;
  }
}
