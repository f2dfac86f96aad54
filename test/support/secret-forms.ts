/**
 * A secret as it could reach an output: the value, base64 (padded, unpadded, url-safe), hex (both
 * cases), URL and form encoding, JSON-escaped. A test that proves "no secret anywhere" searches
 * every one of these; a duplicate form (a value with nothing to encode) is listed once.
 */
export function secretForms(secret: string): string[] {
  const bytes = Buffer.from(secret, 'utf8');
  return [
    ...new Set([
      secret,
      bytes.toString('base64'),
      bytes.toString('base64').replace(/=+$/, ''),
      bytes.toString('base64url'),
      bytes.toString('hex'),
      bytes.toString('hex').toUpperCase(),
      encodeURIComponent(secret),
      encodeURIComponent(secret).replace(/%20/g, '+'),
      new URLSearchParams({ v: secret }).toString().slice(2),
      JSON.stringify(secret).slice(1, -1),
    ]),
  ];
}

/** Every form of every secret found in `text`, as "form" strings: `[]` when nothing leaked. */
export function leakedForms(text: string, secrets: readonly string[]): string[] {
  const searched = secrets.flatMap(secretForms);
  if (searched.length === 0) throw new Error('leakedForms: no secret to search for');
  return searched.filter((form) => text.includes(form));
}
