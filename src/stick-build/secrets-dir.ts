import { readFileSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { Secret } from '../core/secret.js';
import { strictUtf8 } from '../core/utf8-text.js';
import type { SecretLookup } from './render-template.js';

/** A password or key passphrase is short; a large file named as a secret is a mistake. */
const MAX_SECRET_BYTES = 64 * 1024;

export interface SecretsDir {
  lookup: SecretLookup;
  get: (name: string) => Secret | undefined;
  /** Every secret read so far: the redactor's list for every text the build writes. */
  all(): Secret[];
}

/**
 * `--secrets-dir DIR`: `DIR/NAME`, one trailing newline dropped, one line without control
 * characters, each read once. A problem names NAME and never the value.
 */
export function secretsDir(dir: string | undefined): SecretsDir {
  const read = new Map<string, Secret>();
  const failed = new Map<string, { message: string; hint?: string }>();
  const lookup: SecretLookup = (name) => {
    if (read.has(name)) return { ok: true };
    const known = failed.get(name);
    if (known !== undefined) return { ok: false, ...known };
    let outcome: { message: string; hint?: string } | undefined;
    if (dir === undefined) {
      outcome = {
        message: `the template needs the secret '${name}' and no --secrets-dir was given`,
        hint: 'give --secrets-dir DIR holding a file per secret',
      };
    } else {
      try {
        const info = statSync(join(dir, name));
        if (!info.isFile()) outcome = { message: `the secret '${name}' is not a file in ${dir}` };
        else if (info.size > MAX_SECRET_BYTES) outcome = { message: `the secret '${name}' is over 64 KiB` };
        else {
          const text = strictUtf8(readFileSync(join(dir, name)))?.replace(/\r?\n$/, '');
          if (text === undefined)
            outcome = {
              message: `the secret '${name}' is not UTF-8 text (a byte such as Latin-1's)`,
              hint: `save ${join(dir, name)} as UTF-8`,
            };
          else if (text === '') outcome = { message: `the secret '${name}' is empty` };
          // As for a secret file agent.yaml names: a second line or a stray byte would reach the
          // device inside a password and fail its 802.1X or login on site, far from the build.
          // eslint-disable-next-line no-control-regex
          else if (/[\u0000-\u001f\u007f]/.test(text))
            outcome = {
              message: `the secret '${name}' holds more than one line or a control character`,
              hint: `write the secret alone, on one line, to ${join(dir, name)}`,
            };
          else read.set(name, new Secret(text));
        }
      } catch (error) {
        const code = (error as NodeJS.ErrnoException).code;
        outcome =
          code === 'ENOENT'
            ? {
                message: `the secret '${name}' is missing: there is no ${join(dir, name)}`,
                hint: `write it to ${join(dir, name)}`,
              }
            : { message: `the secret '${name}' cannot be read (${code ?? 'error'})` };
      }
    }
    if (outcome === undefined) return { ok: true };
    failed.set(name, outcome);
    return { ok: false, ...outcome };
  };
  return { lookup, get: (name) => read.get(name), all: () => [...read.values()] };
}
