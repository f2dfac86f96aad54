/**
 * `bytes` as UTF-8 text without a leading byte order mark, or undefined when they are not UTF-8.
 * For a secret read from a file: decoded loosely, a Latin-1 or Windows-1252 letter would become
 * U+FFFD, a password that no device or RADIUS server matches, found out on site; a BOM (Notepad's)
 * is never part of a password.
 */
export function strictUtf8(bytes: Uint8Array): string | undefined {
  try {
    return new TextDecoder('utf-8', { fatal: true }).decode(bytes);
  } catch {
    return undefined;
  }
}
