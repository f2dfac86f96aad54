import type { ValidatedStick } from '../certs/index.js';
import { type AgentConfig, hasErrors, type Problem } from '../config/index.js';
import { bringsOwnCredentials, SignatureStatus } from '../signature/index.js';
import { checkFolderSignature } from './folder-signature.js';

export type SignatureGate =
  /**
   * `line`: the signature sentence worth printing; `warning`: an unsigned stick used on the flag's
   * word; `notes`: warnings to show as problems (a policy file nobody vouches for).
   */
  | { ok: true; line: string | undefined; warning: string | undefined; unsignedOnFlag: boolean; notes: Problem[] }
  /** Refused: nothing may be sent to any device; `problems` are the stick's own, then the signature's. */
  | { ok: false; problems: Problem[]; sentence: string };

export const ALLOW_UNSIGNED_FLAG = '--allow-unsigned';

/**
 * The post-check's word for a stick let through unsigned on the flag: the service token is the
 * laptop's credential like a password, and such a stick gets none (it would choose the hostname
 * the laptop asks the service about).
 */
export const UNSIGNED_SERVICE_SENTENCE = "not checked: the stick is unsigned and the service token is the laptop's";

/**
 * `plan` and `apply` honour agent.yaml's `signatures` exactly as `mpprov run` does (the same
 * verdict): a stick the agent would refuse is refused here, before any request. The one way past
 * it is `--allow-unsigned`, and only for an unsigned stick (never an altered or unusable
 * signature) that brings its own admin password for every device it names: a stick relying on a
 * password the laptop holds is never applied unsigned where signatures are required. An invalid
 * stick cannot be judged as bringing its own password, so the flag never passes it; a refused
 * stick's own problems are returned too, so they are shown as they are without signatures.
 */
export async function stickSignatureGate(
  configFile: string,
  stick: ValidatedStick,
  agent: AgentConfig,
  allowUnsigned: boolean,
): Promise<SignatureGate> {
  const verdict = await checkFolderSignature(configFile, stick, agent.signatures);
  const first = verdict.problems[0];
  if (first === undefined)
    return { ok: true, line: verdict.line, warning: undefined, unsignedOnFlag: false, notes: verdict.warnings };
  const unsigned = verdict.status === SignatureStatus.Unsigned;
  const invalid = hasErrors(stick.problems) || stick.model === undefined;
  if (unsigned && allowUnsigned && !invalid && bringsOwnCredentials(stick.model))
    return {
      ok: true,
      line: verdict.line,
      unsignedOnFlag: true,
      notes: verdict.warnings,
      warning: `UNSIGNED STICK USED: agent.yaml requires signatures, but ${ALLOW_UNSIGNED_FLAG} lets this unsigned stick through because it brings its own admin password for every device it names; nobody vouches for its content`,
    };
  const refused = `the stick's signature is refused (${first.file}: ${first.message})`;
  const why = !(unsigned && allowUnsigned)
    ? ''
    : invalid
      ? `; ${ALLOW_UNSIGNED_FLAG} does not apply: the stick is invalid, so it cannot be judged as bringing its own admin password for every device it names`
      : `; ${ALLOW_UNSIGNED_FLAG} does not apply: it is only for a stick that brings its own admin password for every device it names, and this one relies on the laptop's`;
  return {
    ok: false,
    problems: [...stick.problems, ...verdict.problems],
    sentence: `${refused}${why}; nothing was sent to any device`,
  };
}
