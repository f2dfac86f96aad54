/**
 * Secrets never leave the agent: every log line, usb.log, mpprov-result.json and state file passes
 * through here. The engine already keeps secrets out of its events; this is the second wall:
 * values of keys named like a secret are masked, and so is every known secret value wherever it
 * appears in text (a device could echo one back in an error message).
 */

export const REDACTED = '(redacted)';

/** Keys whose values are secret: password, passphrase, private_key_password, secret, authorization. */
export const SECRET_KEY = /pass(?:word|phrase)|secret|authori[sz]ation|cookie|token/i;

/**
 * Secret assignments in free text, in the forms programs write them: `"password":"x"` (JSON),
 * `password=x`, `Authorization: Basic x`. Deliberately not `password: x`: hints such as
 * "add password_file: to the stick" use that form for key names, not values.
 */
const SECRET_IN_TEXT = [
  /("[a-z_]*(?:pass(?:word|phrase)|secret|authori[sz]ation)[a-z_]*"\s*:\s*")((?:[^"\\]|\\.)*)(")/gi,
  /(\b[a-z_]*(?:pass(?:word|phrase)|secret)[a-z_]*=)([^\s&",;]+)()/gi,
  /(\bauthori[sz]ation:?\s*(?:basic|bearer)\s+)([A-Za-z0-9+/=._~-]+)()/gi,
];

/** Masks secret-looking assignments in text, and each of `values` wherever it occurs. */
export function redactText(text: string, values: Iterable<string> = []): string {
  let out = text;
  // Longest first, so a secret that contains another is masked whole.
  const sorted = [...values].filter((v) => v.length >= 3).sort((a, b) => b.length - a.length);
  for (const value of sorted) out = out.split(value).join(REDACTED);
  for (const pattern of SECRET_IN_TEXT) out = out.replace(pattern, (_, head: string, _value: string, tail: string) => `${head}${REDACTED}${tail}`);
  return out;
}

/** A deep copy with every secret-named key's value masked and every string redacted. */
export function redactValue<T>(value: T, values: Iterable<string> = []): T {
  const known = [...values];
  const seen = new WeakSet<object>();
  const walk = (node: unknown): unknown => {
    if (typeof node === 'string') return redactText(node, known);
    if (node === null || typeof node !== 'object') return node;
    if (seen.has(node)) return '(circular)';
    seen.add(node);
    if (Array.isArray(node)) return node.map(walk);
    const out: Record<string, unknown> = {};
    for (const [key, inner] of Object.entries(node)) {
      out[key] = SECRET_KEY.test(key) && !/_file$|_credential$/.test(key) && inner !== undefined && inner !== null ? REDACTED : walk(inner);
    }
    return out;
  };
  return walk(value) as T;
}

/**
 * The secret values the agent knows right now (agent.yaml passwords, the running jobs' stick
 * secrets). Jobs add theirs for their lifetime; the logger masks all of them.
 */
export interface SecretValues {
  add(values: Iterable<string>): () => void;
  values(): string[];
}

export function createSecretValues(): SecretValues {
  const counts = new Map<string, number>();
  return {
    add(values) {
      const list = [...values].filter((v) => v !== '');
      for (const v of list) counts.set(v, (counts.get(v) ?? 0) + 1);
      let removed = false;
      return () => {
        if (removed) return;
        removed = true;
        for (const v of list) {
          const n = (counts.get(v) ?? 1) - 1;
          if (n <= 0) counts.delete(v);
          else counts.set(v, n);
        }
      };
    },
    values: () => [...counts.keys()],
  };
}
