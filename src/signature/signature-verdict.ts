import type { Problem } from '../core/problem.js';
import type { SignatureFiles } from './read-signature-files.js';
import { describeSignature, signatureProblems } from './signature-policy.js';
import { SignatureStatus, type StickSignatureInput, verifyStickSignature } from './verify-stick-signature.js';

/** agent.yaml `signatures`, as the agent and every CLI command take it. */
export interface SignaturePolicy {
  required: boolean;
  allowedSigners: string | undefined;
}

export interface SignatureVerdict {
  /** `unchecked`: no allowed signers to check against. */
  status: SignatureStatus | 'unchecked';
  /** The allowed signer the signature names, when it names one. */
  principal?: string;
  /** Who signed, or why not, in one sentence (`mpprov validate` prints it always). */
  description: string;
  /** One line for usb.log and the CLI, or undefined when there is nothing worth saying (unsigned, not required). */
  line: string | undefined;
  /** Non-empty: the whole stick is refused before any device request. */
  problems: Problem[];
}

export type VerdictInput = Omit<
  StickSignatureInput,
  'manifestBytes' | 'signatureBytes' | 'signatureUnusable' | 'manifestUnusable' | 'allowedSignersFile'
> & {
  /** The two signature files as the caller found them. */
  files: SignatureFiles;
};

/**
 * The one signature policy (docs/stick-format.md, "Signed sticks"; agent-config.md, "The trust
 * boundary"), for the agent's jobs and for `plan`, `apply` and `validate` alike: without allowed
 * signers nothing can be verified (config load refuses `required: true` then); a refused signature
 * always stops the stick; an unsigned stick stops it only when signatures are required.
 */
export async function signatureVerdict(policy: SignaturePolicy, input: VerdictInput): Promise<SignatureVerdict> {
  const { files, ...rest } = input;
  if (policy.allowedSigners === undefined) {
    const description = 'signature not checked: agent.yaml has no signatures.allowed_signers';
    if (files.signature.state === 'absent') return { status: 'unchecked', description, line: undefined, problems: [] };
    return { status: 'unchecked', description, line: description, problems: [] };
  }
  const result = await verifyStickSignature({
    ...rest,
    manifestBytes: files.manifest.state === 'read' ? files.manifest.bytes : undefined,
    signatureBytes: files.signature.state === 'read' ? files.signature.bytes : undefined,
    ...(files.manifest.state === 'unusable' ? { manifestUnusable: files.manifest.reason } : {}),
    ...(files.signature.state === 'unusable' ? { signatureUnusable: files.signature.reason } : {}),
    allowedSignersFile: policy.allowedSigners,
  });
  const description = describeSignature(result);
  const problems = signatureProblems(result, policy.required);
  const quiet = result.status === SignatureStatus.Unsigned && !policy.required;
  const principal = result.status === SignatureStatus.Unsigned ? undefined : result.principal;
  return {
    status: result.status,
    ...(principal === undefined ? {} : { principal }),
    description,
    line: quiet ? undefined : description,
    problems,
  };
}

/**
 * Whether a stick brings its own admin password for every device it names: only such a stick
 * may be used unsigned where signatures are required, and only on a person's explicit word (the
 * CLI's flag). A stick relying on a password the laptop holds never is.
 */
export function bringsOwnCredentials(
  model: { monitoring_points: readonly { password?: unknown; password_file?: unknown }[] } | undefined,
): boolean {
  const points = model?.monitoring_points ?? [];
  return points.length > 0 && points.every((mp) => mp.password !== undefined || mp.password_file !== undefined);
}
