import { type Problem, Severity } from '../core/problem.js';
import { type ManifestEntry, parseManifest, PATH_COLUMN, sha256Hex } from './manifest.js';
import { withPrivateTempDir } from './private-temp-dir.js';
import { readAllowedSigners } from './read-allowed-signers.js';
import { runSshKeygen, signingKeyIn, type SshKeygenOutcome, sshKeygenReason } from './run-ssh-keygen.js';
import { MANIFEST_NAME, SIGNATURE_LIMITS, SIGNATURE_NAME, SIGNATURE_NAMESPACE } from './signature-files.js';
import { quotePath, stickPath } from './stick-path.js';

export const SignatureStatus = { Signed: 'signed', Unsigned: 'unsigned', Refused: 'refused' } as const;
export type SignatureStatus = (typeof SignatureStatus)[keyof typeof SignatureStatus];

export type StickSignature =
  | {
      status: typeof SignatureStatus.Signed;
      /** The allowed signer's principal, as allowed_signers names it. */
      principal: string;
      /** `ED25519 key SHA256:...`, as ssh-keygen prints it, when it did. */
      key: string | undefined;
      /** Every path the list holds, each checked against the caller's bytes. */
      listed: string[];
    }
  /** Neither file, or a list without a signature: fine unless `signatures.required`. */
  | { status: typeof SignatureStatus.Unsigned; problems: Problem[] }
  /** A signature that is there but fails, or a list that does not match: never used. */
  | { status: typeof SignatureStatus.Refused; principal: string | undefined; problems: Problem[] };

export interface StickSignatureInput {
  /** mpprov.sha256 as read from the stick (once); undefined when the stick has none. */
  manifestBytes: Buffer | undefined;
  /** mpprov.sha256.sig as read from the stick; undefined when the stick has none. */
  signatureBytes: Buffer | undefined;
  /**
   * Why a signature file that is on the stick could not be read (a link, a FIFO, too large), when
   * so: then `signatureBytes` is undefined and the stick is refused, never taken as unsigned.
   */
  signatureUnusable?: string;
  /** The same for mpprov.sha256. */
  manifestUnusable?: string;
  /** agent.yaml `signatures.allowed_signers` (or `validate --allowed-signers`). */
  allowedSignersFile: string;
  /**
   * The stick's files as the caller already read them, keyed by their path from the stick's
   * root as the configuration spells it: the bytes, or their SHA-256 in hex. The files the
   * configuration references and the configuration file itself must be here; other listed files
   * may be, or come through `readListed`.
   */
  filesByPath: ReadonlyMap<string, Buffer | string>;
  /**
   * Reads a listed file that is not in `filesByPath` (more files than the configuration
   * references are allowed): bytes or SHA-256 hex, undefined when it is not there. Called only
   * after the signature verified, so an unsigned list never makes the caller read anything.
   * Without it, such a file counts as missing.
   */
  readListed?: (path: string) => Promise<Buffer | string | undefined>;
  /** The configuration file's name at the stick's root: `mpprov.yaml` or `mpprov.yml`. */
  configName: string;
  /** Every file the configuration references, as written in it (relative to the stick's root). */
  referencedPaths: readonly string[];
  /** How a problem names a stick file; default the bare name (`mpprov.sha256`). */
  fileLabel?: (name: string) => string;
  /** Ends a running ssh-keygen (SIGTERM to the agent); the stick is then refused. */
  signal?: AbortSignal;
  /** Per ssh-keygen run; default 10 s. */
  timeoutMs?: number;
  /** The ssh-keygen program; default the one on PATH. */
  sshKeygen?: string;
}

/** At most this many principals of one key are tried with `-Y verify`. */
const MAX_PRINCIPALS = 8;
const SIGN_HINT = 'sign the stick again: mpprov sign DIR --key FILE';

/**
 * Checks a stick's signature with the OpenSSH tools and its list against the bytes the caller
 * read: `ssh-keygen -Y find-principals` names the signer from allowed_signers, `-Y verify -n
 * mpprov` proves the list is theirs, then every listed hash must match and every referenced file
 * must be listed. Any failure refuses the whole stick with problems naming the file (and the
 * list's line). Never throws for bad input; never reads the stick itself.
 */
export async function verifyStickSignature(input: StickSignatureInput): Promise<StickSignature> {
  const label = input.fileLabel ?? ((name: string) => name);
  const at = (file: string, message: string, hint?: string, line = 1, column = 1): Problem => ({
    severity: Severity.Error,
    file,
    line,
    column,
    path: '',
    message,
    ...(hint === undefined ? {} : { hint }),
  });
  const manifestFile = label(MANIFEST_NAME);
  const signatureFile = label(SIGNATURE_NAME);
  const refused = (problems: Problem[], principal?: string): StickSignature => ({
    status: SignatureStatus.Refused,
    principal,
    problems: capped(problems, manifestFile),
  });

  // Someone put a signature there: unusable is refused like a bad one, never read as "no signature".
  const unusable =
    input.signatureUnusable ??
    (input.signatureBytes === undefined ? undefined : unusableSignature(input.signatureBytes));
  if (unusable !== undefined)
    return refused([at(signatureFile, `${SIGNATURE_NAME} is on the stick but unusable: ${unusable}`, SIGN_HINT)]);
  if (input.signatureBytes === undefined) {
    const what =
      input.manifestBytes === undefined && input.manifestUnusable === undefined
        ? 'the stick is not signed'
        : `the stick is not signed: ${MANIFEST_NAME} has no ${SIGNATURE_NAME} beside it`;
    return { status: SignatureStatus.Unsigned, problems: [at(signatureFile, what, SIGN_HINT)] };
  }
  if (input.manifestUnusable !== undefined)
    return refused([
      at(manifestFile, `${MANIFEST_NAME} is on the stick but unusable: ${input.manifestUnusable}`, SIGN_HINT),
    ]);
  if (input.manifestBytes === undefined)
    return refused([
      at(manifestFile, `${SIGNATURE_NAME} is on the stick but ${MANIFEST_NAME}, the list it signs, is not`, SIGN_HINT),
    ]);
  if (input.signatureBytes.length > SIGNATURE_LIMITS.signatureBytes) {
    return refused([
      at(
        signatureFile,
        `the signature is ${input.signatureBytes.length} bytes; an SSH signature is under 16 KiB`,
        SIGN_HINT,
      ),
    ]);
  }
  if (input.manifestBytes.length > SIGNATURE_LIMITS.manifestBytes) {
    return refused([
      at(
        manifestFile,
        `the file is ${input.manifestBytes.length} bytes; the limit is 256 KiB`,
        "list only the stick's own files",
      ),
    ]);
  }
  const allowed = await readAllowedSigners(input.allowedSignersFile);
  if (!allowed.ok) return refused([at(input.allowedSignersFile, allowed.message, allowed.hint)]);

  // A full or unwritable temporary folder is the laptop's trouble, but still a refusal, not a throw.
  const signer = await findSigner(input, allowed.bytes).catch((error: unknown): Signer => ({
    ok: false,
    blame: 'tool',
    message: `the signature could not be checked: no private temporary folder (${(error as NodeJS.ErrnoException).code ?? 'error'})`,
  }));
  if (!signer.ok) {
    const file = signer.blame === 'tool' ? 'ssh-keygen' : signatureFile;
    return refused([at(file, signer.message, signer.hint)], signer.principal);
  }
  const problems = await checkList(input, manifestFile, at);
  if (problems.problems.length > 0) return refused(problems.problems, signer.principal);
  return { status: SignatureStatus.Signed, principal: signer.principal, key: signer.key, listed: problems.listed };
}

const ARMOR_BEGIN = '-----BEGIN SSH SIGNATURE-----';
const ARMOR_END = '-----END SSH SIGNATURE-----';

/**
 * What is plainly wrong with the signature's bytes, said before ssh-keygen is asked (whose answer
 * would only be "not a valid signature"): empty, not an armored SSH signature, or cut short.
 */
function unusableSignature(bytes: Buffer): string | undefined {
  // Too large is said below, with the size.
  if (bytes.length > SIGNATURE_LIMITS.signatureBytes) return undefined;
  if (bytes.length === 0) return 'the file is empty';
  const text = bytes.toString('latin1').trim();
  if (text === '') return 'the file holds only blank space';
  if (!text.startsWith(ARMOR_BEGIN)) return `it is not an SSH signature (it does not start with ${ARMOR_BEGIN})`;
  if (!text.endsWith(ARMOR_END)) return `it is cut short (it does not end with ${ARMOR_END})`;
  return undefined;
}

type Signer =
  | { ok: true; principal: string; key: string | undefined }
  | { ok: false; blame: 'tool' | 'signature'; message: string; hint?: string; principal?: string };

/** The signature's work, all in a private folder: which allowed signer made it, and does it verify. */
function findSigner(input: StickSignatureInput, allowedSigners: Buffer): Promise<Signer> {
  const manifest = input.manifestBytes as Buffer;
  return withPrivateTempDir(async (_dir, put) => {
    const sig = await put(SIGNATURE_NAME, input.signatureBytes as Buffer);
    const allowed = await put('allowed_signers', allowedSigners);
    const run = (args: string[], stdin?: Buffer): Promise<SshKeygenOutcome> =>
      runSshKeygen(args, {
        timeoutMs: input.timeoutMs ?? 10_000,
        ...(stdin === undefined ? {} : { input: stdin }),
        ...(input.signal === undefined ? {} : { signal: input.signal }),
        ...(input.sshKeygen === undefined ? {} : { program: input.sshKeygen }),
      });
    const toolFailure = (outcome: { why: string; detail: string }): Signer => ({
      ok: false,
      blame: 'tool',
      message: `the signature could not be checked: ${outcome.detail}`,
      ...(outcome.why === 'missing' ? { hint: 'install openssh-client on this laptop' } : {}),
    });
    // ssh-keygen names the private copies it was given: the sentence names the files a person can fix.
    const because = (outcome: SshKeygenOutcome): string =>
      sshKeygenSaid(outcome, [
        [allowed, input.allowedSignersFile],
        [sig, SIGNATURE_NAME],
      ]);

    const find = await run(['-Y', 'find-principals', '-s', sig, '-f', allowed]);
    if (!find.ran) return toolFailure(find);
    const principals = find.exitCode === 0 ? principalsIn(find.stdout) : [];
    if (principals.length === 0) {
      // No allowed signer: a sound mpprov signature by another key, or no sound signature at all?
      const check = await run(['-Y', 'check-novalidate', '-n', SIGNATURE_NAMESPACE, '-s', sig], manifest);
      if (!check.ran) return toolFailure(check);
      if (check.exitCode === 0) {
        const key = signingKeyIn(check.stdout + check.stderr);
        // The key may be there, outside the validity its entry gives (ssh-keygen says so per line).
        const outside = outsideValidity(find.stderr);
        if (outside !== undefined)
          return {
            ok: false,
            blame: 'signature',
            message: `the stick is signed by ${key ?? 'a key'} whose entry in the allowed signers (line ${outside.line}) ${outside.why}`,
            hint: 'renew the entry (valid-before, valid-after) in signatures.allowed_signers, or sign the stick with a key valid now',
          };
        return {
          ok: false,
          blame: 'signature',
          message: `the stick is signed by a key that is not in the allowed signers${key === undefined ? '' : ` (${key})`}`,
          hint: "sign it with a key listed in signatures.allowed_signers, or add the signer's key there",
        };
      }
      return {
        ok: false,
        blame: 'signature',
        message: `${SIGNATURE_NAME} is not a valid "${SIGNATURE_NAMESPACE}" signature of ${MANIFEST_NAME}${because(check)}`,
        hint: SIGN_HINT,
      };
    }
    let last: SshKeygenOutcome | undefined;
    for (const principal of principals.slice(0, MAX_PRINCIPALS)) {
      const verify = await run(
        ['-Y', 'verify', '-f', allowed, '-I', principal, '-n', SIGNATURE_NAMESPACE, '-s', sig],
        manifest,
      );
      if (!verify.ran) return toolFailure(verify);
      if (verify.exitCode === 0) return { ok: true, principal, key: signingKeyIn(verify.stdout + verify.stderr) };
      last = verify;
    }
    const principal = principals[0] as string;
    return {
      ok: false,
      blame: 'signature',
      principal,
      message: `the signature of ${principal} does not verify: ${MANIFEST_NAME} was changed after signing, or the signature is not for "${SIGNATURE_NAMESPACE}"${last === undefined ? '' : because(last)}`,
      hint: SIGN_HINT,
    };
  });
}

/**
 * The first allowed_signers line ssh-keygen found the key on but outside its validity, from
 * find-principals' complaint (`FILE:3: key has expired: verify time ... > valid-before
 * 2020-01-01T00:00:00`): its line and what is wrong, in our words.
 */
function outsideValidity(stderr: string): { line: number; why: string } | undefined {
  const match =
    /:(\d{1,9}): key (has expired|is not yet valid): verify time \S+ [<>] valid-(?:before|after) (\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}Z?)/.exec(
      stderr,
    );
  if (match === null) return undefined;
  const [, line, state, at] = match as unknown as [string, string, string, string];
  return {
    line: Number(line),
    why: state === 'has expired' ? `expired at ${at} (valid-before)` : `is valid only from ${at} (valid-after)`,
  };
}

function sshKeygenSaid(outcome: SshKeygenOutcome, copies: readonly (readonly [string, string])[]): string {
  const named = (text: string): string =>
    copies.reduce((said, [copy, original]) => said.split(copy).join(original), text);
  const reason = outcome.ran ? sshKeygenReason(named(outcome.stderr)) : outcome.detail;
  return reason === undefined ? '' : ` (ssh-keygen: ${reason})`;
}

/** One principal a line; anything but plain printable text (or an absurd length) is ignored. */
function principalsIn(stdout: string): string[] {
  return stdout
    .split('\n')
    .map((line) => line.trim())
    .filter((line) => /^[^\s\p{Cc}\u200e\u200f\u202a-\u202e\u2066-\u2069]{1,256}$/u.test(line));
}

/** Every listed hash against the caller's bytes, and every referenced file listed. */
async function checkList(
  input: StickSignatureInput,
  manifestFile: string,
  at: (file: string, message: string, hint?: string, line?: number, column?: number) => Problem,
): Promise<{ problems: Problem[]; listed: string[] }> {
  const parsed = parseManifest(input.manifestBytes as Buffer);
  const problems = parsed.problems.map((p) => at(manifestFile, p.message, p.hint, p.line, p.column));
  const files = new Map<string, Buffer | string>();
  for (const [path, content] of input.filesByPath) {
    const normal = stickPath(path);
    if (normal.ok) files.set(normal.path, content);
  }
  const listed = new Map<string, ManifestEntry>(parsed.entries.map((e) => [e.path, e]));
  for (const entry of parsed.entries) {
    const content = files.get(entry.path) ?? (await readListed(input, entry.path));
    if (content === undefined) {
      problems.push(
        at(
          manifestFile,
          `${quotePath(entry.path)} is listed but not on the stick`,
          'put the file back, or sign the stick again without it',
          entry.line,
          PATH_COLUMN,
        ),
      );
    } else if ((typeof content === 'string' ? content.toLowerCase() : sha256Hex(content)) !== entry.sha256) {
      problems.push(
        at(
          manifestFile,
          `${quotePath(entry.path)} changed after the stick was signed: its SHA-256 is not the listed one`,
          SIGN_HINT,
          entry.line,
          1,
        ),
      );
    }
  }
  const required = [
    { raw: input.configName, what: 'the configuration file' },
    ...input.referencedPaths.map((raw) => ({ raw, what: `referenced by ${input.configName}` })),
  ];
  const reported = new Set<string>();
  for (const { raw, what } of required) {
    const normal = stickPath(raw);
    if (!normal.ok) {
      problems.push(
        at(
          manifestFile,
          `${input.configName} references a file that cannot be listed in ${MANIFEST_NAME}: ${normal.reason}`,
          normal.hint,
        ),
      );
    } else if (!listed.has(normal.path) && !reported.has(normal.path)) {
      reported.add(normal.path);
      problems.push(
        at(manifestFile, `${quotePath(normal.path)} (${what}) is not listed, so its content is not signed`, SIGN_HINT),
      );
    }
  }
  return { problems, listed: parsed.entries.map((e) => e.path) };
}

async function readListed(input: StickSignatureInput, path: string): Promise<Buffer | string | undefined> {
  try {
    return await input.readListed?.(path);
  } catch {
    return undefined; // unreadable counts as missing: the problem names the file either way
  }
}

/** A hostile list can hold thousands of bad lines: the first ones say enough. */
function capped(problems: Problem[], manifestFile: string): Problem[] {
  if (problems.length <= SIGNATURE_LIMITS.problems) return problems;
  const kept = problems.slice(0, SIGNATURE_LIMITS.problems);
  const more = problems.length - kept.length;
  kept.push({
    severity: Severity.Error,
    file: manifestFile,
    line: 1,
    column: 1,
    path: '',
    message: `and ${more} more problem${more === 1 ? '' : 's'} with the signed list`,
  });
  return kept;
}
