import type { ValidatedStick } from '../certs/index.js';
import type { AgentConfig, Problem } from '../config/index.js';
import { bringsOwnCredentials, SignatureStatus } from '../signature/index.js';
import { checkFolderSignature } from './folder-signature.js';

export type SignatureGate =
  /** `line`: the signature sentence worth printing; `warning`: an unsigned stick used on the flag's word. */
  | { ok: true; line: string | undefined; warning: string | undefined }
  /** Refused: nothing may be sent to any device. */
  | { ok: false; problems: Problem[]; sentence: string };

export const ALLOW_UNSIGNED_FLAG = '--allow-unsigned';

/**
 * `plan` and `apply` honour agent.yaml's `signatures` exactly as `mpprov run` does (the same
 * verdict): a stick the agent would refuse is refused here, before any request. The one way past
 * it is `--allow-unsigned`, and only for an unsigned stick (never an altered or unusable
 * signature) that brings its own admin password for every device it names: a stick relying on a
 * password the laptop holds is never applied unsigned where signatures are required.
 */
export async function stickSignatureGate(
  configFile: string,
  stick: ValidatedStick,
  agent: AgentConfig,
  allowUnsigned: boolean,
): Promise<SignatureGate> {
  const verdict = await checkFolderSignature(configFile, stick, agent.signatures);
  const first = verdict.problems[0];
  if (first === undefined) return { ok: true, line: verdict.line, warning: undefined };
  const unsigned = verdict.status === SignatureStatus.Unsigned;
  if (unsigned && allowUnsigned && bringsOwnCredentials(stick.model))
    return {
      ok: true,
      line: verdict.line,
      warning: `UNSIGNED STICK USED: agent.yaml requires signatures, but ${ALLOW_UNSIGNED_FLAG} lets this unsigned stick through because it brings its own admin password for every device it names; nobody vouches for its content`,
    };
  const refused = `the stick's signature is refused (${first.file}: ${first.message})`;
  const why =
    unsigned && allowUnsigned
      ? `; ${ALLOW_UNSIGNED_FLAG} does not apply: it is only for a stick that brings its own admin password for every device it names, and this one relies on the laptop's`
      : '';
  return { ok: false, problems: verdict.problems, sentence: `${refused}${why}; nothing was sent to any device` };
}
