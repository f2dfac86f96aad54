import { expect } from 'vitest';

/**
 * Checks for output that carried hostile text (names, labels, device sentences with newlines,
 * escape sequences, bidi controls): no raw control character anywhere, and no line beginning
 * `RESULT:` other than the ones the writer of RESULT lines wrote.
 */

// eslint-disable-next-line no-control-regex -- the characters that must not reach any output
const RAW_CONTROL = /[\u0000-\u0008\u000b-\u001f\u007f-\u009f\u061c\u200e\u200f\u2028-\u202e\u2066-\u2069]/;

/** `text` holds no raw control character but its own line ends (`\n`, and `\r\n` when `crlf`). */
export function expectNoRawControls(text: string, what: string, options: { crlf?: boolean } = {}): void {
  const body = options.crlf === true ? text.replaceAll('\r\n', '\n') : text;
  const found = RAW_CONTROL.exec(body);
  expect(found, `${what} holds a raw U+${found?.[0].charCodeAt(0).toString(16).padStart(4, '0') ?? ''}`).toBeNull();
}

/** The lines of `text` that begin with `RESULT:` (after an optional journal `<N>` or `[job]` prefix). */
export function resultLines(text: string): string[] {
  return text.split(/\r?\n/).filter((line) => /^(<\d>)?(\[[^\]]*\] )?RESULT:/.test(line));
}
