import { createHmac } from 'node:crypto';
import { inspect } from 'node:util';

/** What a secret prints as, everywhere: Secret itself and the redactor (core/redact.ts) use it. */
export const SECRET_PLACEHOLDER = '(secret)';

/** The redactor's one way to the value; set by Secret's static block, never exported from core. */
let valueOf: (secret: Secret) => string;

/**
 * A password, passphrase, key password or token, from the moment its YAML value or file is read
 * until its bytes leave for the device. It prints, serialises and inspects as "(secret)", so a
 * configuration or a plan can be logged, diffed or written as JSON without leaking it.
 *
 * The value comes out only through narrowly named doors, each for one purpose, so a reader can
 * find every use: `reveal()` where bytes leave toward the device (the request body and the Basic
 * header in src/client), `keyedHash()` for the secrets record, `decryptWith()` for opening an
 * encrypted key in memory, `satisfies()` for a rule on the value's form, and the redactor's
 * module-private access (the redactor must know a value to find it in text).
 * A class because the value must be hidden state, not a plain property.
 */
export class Secret {
  readonly #value: string;

  static {
    valueOf = (secret) => secret.#value;
  }

  constructor(value: string) {
    this.#value = value;
  }

  /** The value as bytes leaving toward the device: only src/client/json-body.ts and basic-authorization.ts call this. */
  reveal(): string {
    return this.#value;
  }

  /** A rule about the value's form (a WPA passphrase's length and characters); only the answer comes out. */
  satisfies(check: (value: string) => boolean): boolean {
    return check(this.#value);
  }

  /**
   * HMAC-SHA256 over each context part and then the value, NUL-separated, in hex: how the secrets
   * record tells "unchanged since last applied" without keeping the secret.
   */
  keyedHash(key: Uint8Array, context: readonly string[]): string {
    const hmac = createHmac('sha256', key);
    for (const part of context) hmac.update(`${part}\0`);
    return hmac.update(this.#value).digest('hex');
  }

  /**
   * Opens an encrypted private key or PFX in memory: the value is handed to `decrypt` and only
   * its result comes back. For src/certs, whose readers take the password as a string (node-forge).
   */
  decryptWith<T>(decrypt: (password: string) => T): T {
    return decrypt(this.#value);
  }

  /**
   * The value rendered into the configuration file `mpprov preflight` hands the laptop's own
   * wpa_supplicant (mode 0600 in a private folder, removed after the run): only the text comes back.
   */
  intoSupplicantConfig(render: (value: string) => string): string {
    return render(this.#value);
  }

  /** `prefix` + this value as a new Secret: the Basic credentials `user:password`, so the redactor also knows their base64. */
  prefixed(prefix: string): Secret {
    return new Secret(`${prefix}${this.#value}`);
  }

  toString(): string {
    return SECRET_PLACEHOLDER;
  }

  toJSON(): string {
    return SECRET_PLACEHOLDER;
  }

  [inspect.custom](): string {
    return SECRET_PLACEHOLDER;
  }
}

/**
 * For core/redact.ts only (core/index.ts does not export it): the redactor has to know a value to
 * find it, and its forms, in text.
 */
export function valueForRedaction(secret: Secret): string {
  return valueOf(secret);
}
