import { formatKeyPath, type Problem, Severity } from '../core/problem.js';
import { keyPathAtOffset, type YamlSource } from './yaml-source.js';

/**
 * A configuration file is UTF-8 text. Node's decoder turns a byte that is not UTF-8 (a file saved
 * as Latin-1 or Windows-1252: `é` as 0xE9) into U+FFFD without a word, and YAML keeps a NUL byte
 * inside a quoted value: a password would silently become another password. Each such line is a
 * located problem instead. The byte itself is never quoted: it may be part of a secret.
 */
export function encodingProblems(bytes: Buffer, source: YamlSource): Problem[] {
  const problems: Problem[] = [];
  const textLines = source.text.split('\n');
  let lineStartByte = 0;
  let lineStartChar = 0;
  for (let line = 0; lineStartByte <= bytes.length && problems.length < 20; line++) {
    let end = bytes.indexOf(0x0a, lineStartByte);
    if (end < 0) end = bytes.length;
    const raw = bytes.subarray(lineStartByte, end);
    const bad = firstInvalidUtf8(raw);
    const nul = raw.indexOf(0);
    const at = bad < 0 ? nul : nul < 0 ? bad : Math.min(bad, nul);
    if (at >= 0) {
      const column = raw.subarray(0, at).toString('utf8').length + 1;
      const isNul = at === nul;
      problems.push({
        severity: Severity.Error,
        file: source.file,
        line: line + 1,
        column,
        path: formatKeyPath(keyPathAtOffset(source.document, lineStartChar + column - 1)),
        message: isNul
          ? 'this line holds a NUL byte, which is not text'
          : 'this line holds a byte that is not UTF-8 text (was the file saved as Latin-1 or Windows-1252?)',
        hint: isNul
          ? 'remove it: a configuration file is plain text'
          : 'save the file as UTF-8; mpprov does not guess an encoding, since a password would change',
      });
    }
    lineStartChar += (textLines[line]?.length ?? 0) + 1;
    lineStartByte = end + 1;
  }
  return problems;
}

/** Index of the first byte that does not belong to a well-formed UTF-8 sequence, or -1. */
function firstInvalidUtf8(bytes: Uint8Array): number {
  let i = 0;
  while (i < bytes.length) {
    const b = bytes[i] ?? 0;
    let need: number;
    let min: number;
    if (b < 0x80) {
      i += 1;
      continue;
    } else if (b >= 0xc2 && b <= 0xdf) {
      need = 1;
      min = 0x80;
    } else if (b >= 0xe0 && b <= 0xef) {
      need = 2;
      min = 0x800;
    } else if (b >= 0xf0 && b <= 0xf4) {
      need = 3;
      min = 0x10000;
    } else {
      return i;
    }
    let code = b & (0x3f >> need);
    for (let k = 1; k <= need; k++) {
      const c = bytes[i + k];
      if (c === undefined || (c & 0xc0) !== 0x80) return i;
      code = (code << 6) | (c & 0x3f);
    }
    // Overlong forms, UTF-16 surrogates and code points past U+10FFFF are not UTF-8 either.
    if (code < min || (code >= 0xd800 && code <= 0xdfff) || code > 0x10ffff) return i;
    i += need + 1;
  }
  return -1;
}
