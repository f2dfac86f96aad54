import { type Problem, Severity } from '../core/problem.js';
import type { SignatureFileRead } from './read-signature-files.js';
import { describeNotAfter, hasExpired, type NotAfter, parsePolicy, POLICY_NAME } from './stick-policy.js';

const AGAIN_HINT = 'build or sign the stick again with a later date: mpprov sign DIR --key FILE --valid-until DATE';

/**
 * A signed policy file's word on the stick at `now`: a file the signature lists but that cannot be
 * read, is not a policy, or whose `not_after` has passed refuses the stick, naming the date.
 */
export function judgePolicy(
  read: SignatureFileRead,
  file: string,
  now: Date,
): { ok: true; notAfter: NotAfter } | { ok: false; problem: Problem } {
  const refuse = (message: string, hint: string): { ok: false; problem: Problem } => ({
    ok: false,
    problem: { severity: Severity.Error, file, line: 1, column: 1, path: '', message, hint },
  });
  if (read.state === 'absent') return refuse(`${POLICY_NAME} is signed but not on the stick`, AGAIN_HINT);
  if (read.state === 'unusable') return refuse(`${POLICY_NAME} is signed but unusable: ${read.reason}`, AGAIN_HINT);
  const parsed = parsePolicy(read.bytes);
  if (!parsed.ok) return refuse(parsed.message, parsed.hint);
  if (hasExpired(parsed.notAfter, now))
    return refuse(
      `the stick expired: it was signed to be used until ${describeNotAfter(parsed.notAfter)}, and it is now ${now.toISOString()}`,
      AGAIN_HINT,
    );
  return { ok: true, notAfter: parsed.notAfter };
}
