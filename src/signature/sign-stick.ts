import { readFile, stat } from 'node:fs/promises';
import { join, resolve } from 'node:path';
import { checkReplaceable, replaceDurably, type WriteTarget } from '../core/durable-write.js';
import { classifyStickError, StickProblem } from '../core/stick-problem.js';
import { type Problem, Severity } from '../core/problem.js';
import { readReferencedFile } from '../ingest/index.js';
import { formatManifest, sha256Hex } from './manifest.js';
import { withPrivateTempDir } from './private-temp-dir.js';
import { runSshKeygen, signingKeyIn, sshKeygenReason } from './run-ssh-keygen.js';
import { MANIFEST_NAME, SIGNATURE_NAME, SIGNATURE_NAMESPACE, UNLISTABLE_NAMES } from './signature-files.js';
import { foldCase, quotePath, stickPath } from './stick-path.js';

const REMOVE_HINT = 'remove it from the stick and sign again';

export interface SignStickOptions {
  /** The configuration file's name at the stick's root (`mpprov.yaml`). */
  configName: string;
  /** Every file the configuration references, as written in it. */
  referencedPaths: readonly string[];
  /** More files to list (and so to sign) beside those. */
  extraPaths?: readonly string[];
  /** Let ssh-keygen ask on the terminal for the key's passphrase (the CLI); default no terminal. */
  interactive?: boolean;
  /** The ssh-keygen program; default the one on PATH. */
  sshKeygen?: string;
}

export type SignOutcome =
  | { ok: true; listed: string[]; /** `ED25519 key SHA256:...` */ key: string | undefined }
  | { ok: false; problems: Problem[] };

/**
 * Signs a stick folder: writes `mpprov.sha256` (the configuration file and every file it
 * references, plus `extraPaths`, as sha256sum prints them) and `mpprov.sha256.sig`
 * (`ssh-keygen -Y sign -f KEY -n mpprov`), each whole or not at all. The signature is made in a
 * private folder and checked (`-Y check-novalidate`) before either file reaches the stick. Both
 * are written like the agent's usb.log: never through a link, never into a FIFO, a folder, a
 * second name of another file or a file mounted from elsewhere, and nothing at all when either
 * place is refused.
 */
export async function signStick(dir: string, keyFile: string, options: SignStickOptions): Promise<SignOutcome> {
  const problem = (file: string, message: string, hint?: string): Problem => ({
    severity: Severity.Error,
    file,
    line: 1,
    column: 1,
    path: '',
    message,
    ...(hint === undefined ? {} : { hint }),
  });
  const problems: Problem[] = [];
  const paths: string[] = [];
  const folded = new Map<string, string>();
  for (const raw of [options.configName, ...options.referencedPaths, ...(options.extraPaths ?? [])]) {
    const normal = stickPath(raw);
    if (!normal.ok) {
      problems.push(problem(raw.replace(/[^\x20-\x7e]/g, '?'), `cannot be listed: ${normal.reason}`, normal.hint));
      continue;
    }
    const path = normal.path;
    if (UNLISTABLE_NAMES.some((name) => foldCase(name) === foldCase(path))) {
      problems.push(
        problem(
          path,
          `${quotePath(path)} cannot be listed: it is the list itself, its signature, or a file the agent writes on the stick`,
        ),
      );
      continue;
    }
    const other = folded.get(foldCase(path));
    if (other === path) continue;
    if (other !== undefined) {
      problems.push(
        problem(
          path,
          `${quotePath(path)} and ${quotePath(other)} differ only in letter case, which a FAT stick cannot tell apart`,
          'spell the file the same way everywhere',
        ),
      );
      continue;
    }
    folded.set(foldCase(path), path);
    paths.push(path);
  }
  const entries: { path: string; sha256: string }[] = [];
  for (const path of paths) {
    const read = await readReferencedFile(dir, path);
    if (read.ok) entries.push({ path, sha256: sha256Hex(read.bytes) });
    else problems.push(problem(path, read.message, read.hint));
  }
  if (problems.length > 0) return { ok: false, problems };

  /** Why `name` could not be written, said about the file the writer refused (it may be its .tmp). */
  const unwritable = (name: string, error: unknown): SignOutcome => {
    const { code, path } = error as NodeJS.ErrnoException;
    const kind = classifyStickError(error);
    const refused = kind === StickProblem.Link || kind === StickProblem.NotPlain;
    const file = refused && typeof path === 'string' ? path : join(dir, name);
    const said =
      kind === StickProblem.Link
        ? problem(file, 'is a symbolic link, which mpprov never writes through: nothing was written', REMOVE_HINT)
        : kind === StickProblem.NotPlain
          ? problem(
              file,
              'is not a plain file (a FIFO, a device, a folder, a second name of another file, or a file mounted from another filesystem): nothing was written to it',
              REMOVE_HINT,
            )
          : problem(
              file,
              `cannot be written (${code ?? 'error'})`,
              'check that the stick is mounted read-write and not full',
            );
    return { ok: false, problems: [said] };
  };
  // The folder's filesystem: a file created anywhere else (the stick pulled and its empty mount
  // folder left behind) is removed again and the write fails.
  const target: WriteTarget = { device: (await stat(dir)).dev };
  // Both places are checked before signing: a refused signature file must not leave a new list
  // beside the old signature (nor ask for a passphrase first).
  for (const name of [MANIFEST_NAME, SIGNATURE_NAME]) {
    try {
      await checkReplaceable(join(dir, name));
    } catch (error) {
      return unwritable(name, error);
    }
  }

  const manifest = formatManifest(entries);
  const signed = await withPrivateTempDir(async (_tmp, put) => {
    const manifestFile = await put(MANIFEST_NAME, manifest);
    const sign = await runSshKeygen(['-Y', 'sign', '-f', resolve(keyFile), '-n', SIGNATURE_NAMESPACE, manifestFile], {
      // The signer's own tool on their own machine: its agent (SSH_AUTH_SOCK) and askpass may be needed.
      env: process.env,
      stdin: options.interactive === true ? 'inherit' : 'ignore',
      timeoutMs: options.interactive === true ? 300_000 : 30_000,
      ...(options.sshKeygen === undefined ? {} : { program: options.sshKeygen }),
    });
    if (!sign.ran)
      return { ok: false as const, problem: problem(keyFile, `the stick could not be signed: ${sign.detail}`) };
    if (sign.exitCode !== 0) {
      const reason = sshKeygenReason(sign.stderr);
      return {
        ok: false as const,
        problem: problem(
          keyFile,
          `ssh-keygen could not sign with this key${reason === undefined ? '' : ` (${reason})`}`,
          'give an SSH private key (or its .pub with the key in ssh-agent)',
        ),
      };
    }
    const signature = await readFile(`${manifestFile}.sig`);
    // The signature just made must pass the check the agent will make, before it reaches the stick.
    const check = await runSshKeygen(
      ['-Y', 'check-novalidate', '-n', SIGNATURE_NAMESPACE, '-s', `${manifestFile}.sig`],
      {
        input: manifest,
        timeoutMs: 10_000,
        ...(options.sshKeygen === undefined ? {} : { program: options.sshKeygen }),
      },
    );
    if (!check.ran || check.exitCode !== 0)
      return { ok: false as const, problem: problem(keyFile, 'ssh-keygen made a signature that does not check out') };
    return { ok: true as const, signature, key: signingKeyIn(check.stdout + check.stderr) };
  });
  if (!signed.ok) return { ok: false, problems: [signed.problem] };

  for (const [name, bytes] of [
    [MANIFEST_NAME, manifest],
    [SIGNATURE_NAME, signed.signature],
  ] as const) {
    try {
      await replaceDurably(join(dir, name), bytes, target);
    } catch (error) {
      return unwritable(name, error);
    }
  }
  return { ok: true, listed: paths, key: signed.key };
}
