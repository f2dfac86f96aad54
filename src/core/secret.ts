import { inspect } from 'node:util';

/**
 * A password, passphrase or key password. The value only comes out through `reveal()`, so a
 * configuration object can be logged, diffed or serialised without leaking it.
 * A class because the value must be hidden state, not a plain property.
 */
export class Secret {
  readonly #value: string;

  constructor(value: string) {
    this.#value = value;
  }

  reveal(): string {
    return this.#value;
  }

  toString(): string {
    return '(secret)';
  }

  toJSON(): string {
    return '(secret)';
  }

  [inspect.custom](): string {
    return 'Secret(redacted)';
  }
}
