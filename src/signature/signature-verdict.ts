import { type Problem, Severity } from '../core/problem.js';
import { judgePolicy } from './judge-policy.js';
import type { SignatureFiles } from './read-signature-files.js';
import { describeSignature, signatureProblems } from './signature-policy.js';
import { foldCase } from './stick-path.js';
import { describeNotAfter, POLICY_NAME } from './stick-policy.js';
import {
  SignatureStatus,
  type StickSignature,
  type StickSignatureInput,
  verifyStickSignature,
} from './verify-stick-signature.js';

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
  /** Said, never refusing: a policy file nobody vouches for, so it is ignored. */
  warnings: Problem[];
  /** The signed policy's `not_after`, as the signer wrote it. */
  notAfter?: string;
}

export type VerdictInput = Omit<
  StickSignatureInput,
  'manifestBytes' | 'signatureBytes' | 'signatureUnusable' | 'manifestUnusable' | 'allowedSignersFile'
> & {
  /** The signature files (and the policy file) as the caller found them. */
  files: SignatureFiles;
  /** The moment a signed `not_after` is compared with; default now. */
  now?: Date;
};

/**
 * The one signature policy (docs/stick-format.md, "Signed sticks"; agent-config.md, "The trust
 * boundary"), for the agent's jobs and for `plan`, `apply` and `validate` alike: without allowed
 * signers nothing can be verified (config load refuses `required: true` then); a refused signature
 * always stops the stick; an unsigned stick stops it only when signatures are required.
 */
export async function signatureVerdict(policy: SignaturePolicy, input: VerdictInput): Promise<SignatureVerdict> {
  const { files, now, ...rest } = input;
  const policyFile = (rest.fileLabel ?? ((name: string) => name))(POLICY_NAME);
  // A policy file nobody vouches for restricts nothing, and a forged one must not be taken as a promise.
  const ignored = (why: string): Problem[] =>
    files.policy.state === 'absent'
      ? []
      : [
          {
            severity: Severity.Warning,
            file: policyFile,
            line: 1,
            column: 1,
            path: '',
            message: `${POLICY_NAME} is ignored: ${why}, so nobody vouches for it`,
            hint: 'sign the stick with the policy file: mpprov sign DIR --key FILE --valid-until DATE',
          },
        ];
  if (policy.allowedSigners === undefined) {
    const description = 'signature not checked: agent.yaml has no signatures.allowed_signers';
    const warnings = ignored('no signature is checked (agent.yaml has no signatures.allowed_signers)');
    const line = files.signature.state === 'absent' ? undefined : description;
    return { status: 'unchecked', description, line, problems: [], warnings };
  }
  const filesByPath = new Map(rest.filesByPath);
  // The policy is judged from these very bytes, so the hash checked is the hash of what is read.
  if (files.policy.state === 'read') filesByPath.set(POLICY_NAME, files.policy.bytes);
  let result: StickSignature = await verifyStickSignature({
    ...rest,
    filesByPath,
    manifestBytes: files.manifest.state === 'read' ? files.manifest.bytes : undefined,
    signatureBytes: files.signature.state === 'read' ? files.signature.bytes : undefined,
    ...(files.manifest.state === 'unusable' ? { manifestUnusable: files.manifest.reason } : {}),
    ...(files.signature.state === 'unusable' ? { signatureUnusable: files.signature.reason } : {}),
    allowedSignersFile: policy.allowedSigners,
  });
  let warnings: Problem[] = [];
  let description = describeSignature(result);
  let notAfter: string | undefined;
  if (result.status === SignatureStatus.Signed) {
    if (result.listed.some((path) => foldCase(path) === foldCase(POLICY_NAME))) {
      const judged = judgePolicy(files.policy, policyFile, now ?? new Date());
      if (judged.ok) {
        notAfter = judged.notAfter.text;
        description = `${description}; valid until ${describeNotAfter(judged.notAfter)}`;
      } else {
        result = { status: SignatureStatus.Refused, principal: result.principal, problems: [judged.problem] };
        description = `${describeSignature(result)}: ${judged.problem.message}`;
      }
    } else warnings = ignored(`${POLICY_NAME} is not listed in the signed list`);
  } else if (result.status === SignatureStatus.Unsigned) warnings = ignored('the stick is not signed');
  const problems = signatureProblems(result, policy.required);
  const quiet = result.status === SignatureStatus.Unsigned && !policy.required;
  const principal = result.status === SignatureStatus.Unsigned ? undefined : result.principal;
  return {
    status: result.status,
    ...(principal === undefined ? {} : { principal }),
    description,
    line: quiet ? undefined : description,
    problems,
    warnings,
    ...(notAfter === undefined ? {} : { notAfter }),
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
