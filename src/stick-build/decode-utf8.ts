import type { Problem } from '../core/problem.js';
import { problemAt } from './place.js';

export type Decoded = { ok: true; text: string } | { ok: false; problem: Problem };

/**
 * A spreadsheet export as text: UTF-8 with or without a BOM. Anything else (Latin-1 from an old
 * "CSV" export) is refused whole, naming the first line that holds a byte that is not UTF-8:
 * guessing the encoding would put wrong letters into names and identities.
 */
export function decodeUtf8(bytes: Buffer, file: string): Decoded {
  const start = bytes[0] === 0xef && bytes[1] === 0xbb && bytes[2] === 0xbf ? 3 : 0;
  const body = bytes.subarray(start);
  try {
    return { ok: true, text: new TextDecoder('utf-8', { fatal: true, ignoreBOM: true }).decode(body) };
  } catch {
    let line = 1;
    let from = 0;
    const strict = new TextDecoder('utf-8', { fatal: true, ignoreBOM: true });
    for (;;) {
      const end = body.indexOf(0x0a, from);
      const slice = body.subarray(from, end === -1 ? body.length : end);
      try {
        strict.decode(slice);
      } catch {
        break;
      }
      if (end === -1) break;
      from = end + 1;
      line += 1;
    }
    return {
      ok: false,
      problem: problemAt(
        { file, line, column: 1 },
        'the file is not UTF-8 text (this line holds a byte that is not UTF-8, such as Latin-1): nothing is built from it',
        'save it as UTF-8 (a spreadsheet\'s "CSV UTF-8" export)',
      ),
    };
  }
}
