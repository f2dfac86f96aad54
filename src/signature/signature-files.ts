import { AGENT_OUTPUT_NAMES } from '../ingest/index.js';

/**
 * The names and limits of a signed stick (docs/stick-format.md, "Signed sticks"). One place, so the
 * signer and the verifier cannot disagree about them.
 */

/** The list of files with their SHA-256, at the stick's root, exactly as `sha256sum` prints it. */
export const MANIFEST_NAME = 'mpprov.sha256';

/** The armored SSH signature of the list (`ssh-keygen -Y sign -n mpprov`). */
export const SIGNATURE_NAME = 'mpprov.sha256.sig';

/** The SSH signature namespace: a signature made for git or e-mail never passes for a stick. */
export const SIGNATURE_NAMESPACE = 'mpprov';

export const SIGNATURE_LIMITS = {
  /** The same cap as the configuration file: a list of a few dozen files is a few KiB. */
  manifestBytes: 256 * 1024,
  manifestLines: 4096,
  /** A path longer than this is not a file name a person wrote into a configuration. */
  pathBytes: 1024,
  /** An armored RSA-8192 signature is under 2 KiB. */
  signatureBytes: 16 * 1024,
  /** The laptop's allowed_signers file: trusted, but still never read whole without a cap. */
  allowedSignersBytes: 1024 * 1024,
  /** After this many problems in one list, the rest are counted, not listed. */
  problems: 20,
} as const;

/**
 * Files that can never be listed: the list itself and its signature (a hash of itself cannot be
 * in itself), and what the agent writes back onto the stick after every job (listing those would
 * make a signed stick fail on its second insertion).
 */
export const UNLISTABLE_NAMES: readonly string[] = [MANIFEST_NAME, SIGNATURE_NAME, ...AGENT_OUTPUT_NAMES];
