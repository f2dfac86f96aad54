import type { X509Certificate } from 'node:crypto';
import { Severity, type UnplacedProblem } from '../core/problem.js';
import { type CredentialFile, type SecretValue, keyLabel, siblingPath } from './credential-file.js';
import { CredentialKind, derTruncation, detectCredentialKind, isCertificateKind, isPrivateKeyKind } from './detect.js';
import { MAX_KDF_ITERATIONS, formatIterations } from './kdf-iterations.js';
import { readCertificates } from './read-certificates.js';
import { ReadFailure, isReadError } from './read-error.js';
import type { KeyContents } from './read-pfx.js';
import { readPrivateKey } from './read-private-key.js';

type Wanted = 'a certificate' | 'a private key';

/**
 * The most certificates read from one file. A CA bundle of hundreds is plausible (a system's
 * trust store has about 150); thousands are not, and each costs a parse and its checks.
 */
const MAX_CERTIFICATES = 1_000;

/**
 * Reads a certificate slot; on any failure records one problem and gives undefined. `beside`
 * says whether the file sits next to a private_key slot (802.1X), which hints may then point to.
 */
export function openCertificateFile(
  file: CredentialFile,
  problems: UnplacedProblem[],
  beside = true,
): X509Certificate[] | undefined {
  const kind = detectCredentialKind(file.bytes);
  if (!isCertificateKind(kind)) {
    problems.push(wrongContent(file, kind, 'a certificate', beside));
    return undefined;
  }
  const certificates = readCertificates(file.bytes, MAX_CERTIFICATES + 1);
  if (!isReadError(certificates) && certificates.length > MAX_CERTIFICATES) {
    problems.push(
      error(
        file,
        `${file.name} holds more than ${MAX_CERTIFICATES} certificates, more than any CA bundle needs; only the first ${MAX_CERTIFICATES} were checked`,
        'name a file with only the certificates this key needs',
      ),
    );
    return certificates.slice(0, MAX_CERTIFICATES);
  }
  if (!isReadError(certificates)) return certificates;
  problems.push(
    error(
      file,
      `${file.name} looks like a certificate but cannot be read; it may be damaged`,
      'copy the file again, or export the certificate again from its source',
    ),
  );
  return undefined;
}

export interface OpenedKey {
  /** What the content looks like, known even when the key could not be read. */
  kind: CredentialKind;
  contents?: KeyContents;
}

/** Reads a private key slot, with its password if one was given; records problems as it goes. */
export function openPrivateKeyFile(
  file: CredentialFile,
  password: SecretValue | undefined,
  problems: UnplacedProblem[],
): OpenedKey {
  const kind = detectCredentialKind(file.bytes);
  if (!isPrivateKeyKind(kind)) {
    problems.push(wrongContent(file, kind, 'a private key', true));
    return { kind };
  }
  const passwordPath = password?.keyPath ?? siblingPath(file.keyPath, 'private_key_password');
  const passwordLabel = keyLabel(passwordPath);
  if (password !== undefined && (kind === CredentialKind.PemPrivateKey || kind === CredentialKind.DerPrivateKey)) {
    problems.push({
      severity: Severity.Warning,
      path: passwordPath,
      message: `${file.name} is not encrypted, so ${passwordLabel} is ignored`,
      hint: `remove ${passwordLabel}`,
    });
  }

  // The one place the key password is used: handed to the decryption in memory, nothing kept.
  const read =
    password === undefined
      ? readPrivateKey(file.bytes)
      : password.value.decryptWith((value) => readPrivateKey(file.bytes, value));
  if (!isReadError(read)) return { kind, contents: read };
  const what = kind === CredentialKind.Pfx ? 'a PFX file' : 'a private key';
  switch (read.error) {
    case ReadFailure.NeedsPassword:
      problems.push(
        error(
          file,
          `${file.name} is encrypted and needs a password`,
          `add ${passwordLabel}: (or ${passwordLabel}_file:) with the key's password`,
        ),
      );
      break;
    case ReadFailure.WrongPassword:
      // Points at the password, which is what needs fixing; the message names the file, never the value.
      problems.push({
        severity: Severity.Error,
        path: passwordPath,
        message: `${passwordLabel} is the wrong password for ${file.name}`,
        hint: `give the password ${file.name} was exported with`,
      });
      break;
    case ReadFailure.Unsupported:
      problems.push(
        error(
          file,
          `${file.name} uses an encryption or format that mpprov cannot read`,
          'export it again as PKCS#8 PEM, or as a PFX with AES-256 or 3DES encryption',
        ),
      );
      break;
    case ReadFailure.TooManyIterations:
      problems.push(
        error(
          file,
          `${file.name} uses ${formatIterations(read.iterations ?? Infinity)} key-derivation iterations, more than mpprov accepts (${formatIterations(MAX_KDF_ITERATIONS)})`,
          kind === CredentialKind.Pfx
            ? 'export it again with fewer (openssl pkcs12 -iter 2048)'
            : 'export it again with fewer (openssl pkcs8 -topk8 -iter 2048)',
        ),
      );
      break;
    case ReadFailure.NoKey:
      problems.push(
        error(file, `${file.name} is a PFX file without a private key`, 'export the PFX again with its private key'),
      );
      break;
    case ReadFailure.Unreadable:
      problems.push(
        error(
          file,
          `${file.name} looks like ${what} but cannot be read; it may be damaged`,
          'copy the file again, or export the key again from its source',
        ),
      );
      break;
  }
  return { kind };
}

const FOUND: Record<CredentialKind, string> = {
  [CredentialKind.PemCertificate]: 'a certificate',
  [CredentialKind.DerCertificate]: 'a certificate',
  [CredentialKind.PemPrivateKey]: 'a private key',
  [CredentialKind.PemEncryptedPrivateKey]: 'a private key',
  [CredentialKind.DerPrivateKey]: 'a private key',
  [CredentialKind.DerEncryptedPrivateKey]: 'a private key',
  [CredentialKind.Pfx]: 'a PFX (PKCS#12) file',
  [CredentialKind.CertificateRequest]: 'a certificate request (CSR)',
  [CredentialKind.PublicKey]: 'a public key',
  [CredentialKind.Unknown]: 'something else',
};

/** One problem for a file whose content does not fit its slot: empty, truncated, unknown or the wrong kind. */
function wrongContent(file: CredentialFile, kind: CredentialKind, wanted: Wanted, beside: boolean): UnplacedProblem {
  const slot = keyLabel(file.keyPath);
  const pointAt =
    wanted === 'a certificate'
      ? `point ${slot}: at a certificate file (PEM or DER)`
      : `point ${slot}: at a private key file (PEM, DER or PFX)`;
  if (file.bytes.length === 0) {
    return error(file, `${file.name} is empty, but ${slot} needs ${wanted}`, 'copy the file onto the stick again');
  }
  if (kind === CredentialKind.Unknown) {
    const truncated = derTruncation(file.bytes);
    if (truncated !== undefined) {
      return error(
        file,
        `${file.name} is truncated: it declares ${truncated.declared} bytes but holds ${truncated.actual}`,
        'copy the file onto the stick again from its source',
      );
    }
    return error(
      file,
      `${file.name} is not a certificate or key in PEM, DER or PFX form, but ${slot} needs ${wanted}`,
      pointAt,
    );
  }
  let hint = pointAt;
  if (kind === CredentialKind.CertificateRequest) hint = `a CSR is only a request: ${pointAt}`;
  else if (wanted === 'a certificate' && isPrivateKeyKind(kind) && beside)
    hint = `${pointAt}; keys and PFX files belong in private_key`;
  else if (wanted === 'a private key' && isCertificateKind(kind))
    hint = `${pointAt}; certificates belong in client_cert or ca_cert`;
  return error(file, `${file.name} holds ${FOUND[kind]}, but ${slot} needs ${wanted}`, hint);
}

function error(file: CredentialFile, message: string, hint: string): UnplacedProblem {
  return { severity: Severity.Error, path: file.keyPath, message, hint };
}
