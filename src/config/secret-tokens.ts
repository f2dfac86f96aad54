/**
 * The words a person wrote as a secret, taken from the raw text rather than the parsed data: when
 * the YAML around a password is broken (an unquoted comma in a flow map, a value wrapped onto the
 * next line), parts of it turn up as keys or parser tokens, and no problem may quote them.
 */

const SECRET_KEY_LINE = /^(\s*)(?:-\s+)?.*?(?:\b|_)(password|passphrase|private_key_password)\s*:(.*)$/;
const KEY_LINE = /^\s*(?:-\s+)?[\w."'-]+\s*:/;
const MIN_TOKEN = 4;

export function secretTokens(text: string): string[] {
  const tokens = new Set<string>();
  const lines = text.split(/\r?\n/);
  for (let i = 0; i < lines.length; i++) {
    const raw = lines[i] ?? '';
    if (raw.trimStart().startsWith('#')) continue;
    const match = SECRET_KEY_LINE.exec(raw);
    // `password_file:` never matches: the key must be followed by its colon.
    if (match === null) continue;
    // In a flow map the value ends where the next `key:` starts; an unquoted comma inside a
    // secret does not end it here, because YAML would turn the rest into a key we must hide.
    const value = (match[3] ?? '').split(/,\s*[A-Za-z_][\w-]*\s*:/)[0] ?? '';
    for (const token of split(value)) tokens.add(token);
    // Lines that continue the value: more indented than the key, and not keys themselves.
    const indent = (match[1] ?? '').length;
    for (let j = i + 1; j < lines.length; j++) {
      const line = lines[j] ?? '';
      if (line.trim() === '') continue;
      if (line.search(/\S/) <= indent || KEY_LINE.test(line)) break;
      for (const token of split(line)) tokens.add(token);
    }
  }
  return [...tokens];
}

function split(value: string): string[] {
  return value
    .replace(/\s#.*$/, '')
    .split(/[\s,{}[\]"'|>:]+/)
    // YAML tags, anchors and aliases (`!!binary`, `&a`, `*a`) are syntax, not the secret.
    .filter((t) => t.length >= MIN_TOKEN && !/^[!&*]/.test(t));
}

/** Replaces every secret token in a text; used on each problem before anyone sees it. */
export function maskSecretTokens(text: string, tokens: readonly string[]): string {
  let out = text;
  for (const token of tokens) if (out.includes(token)) out = out.split(token).join('(secret)');
  return out;
}
