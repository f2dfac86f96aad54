import { createHash } from 'node:crypto';
import { SIGNATURE_LIMITS, UNLISTABLE_NAMES } from './signature-files.js';
import { foldCase, quotePath, stickPath } from './stick-path.js';

/**
 * mpprov.sha256: `<64 lower-case hex>  <path>` per line, as `sha256sum` prints it. The file comes
 * from a stick, so it is parsed as hostile input: capped in size and lines, every line checked
 * on its own, and a problem never quotes anything from a line but a path that passed every check
 * (a hash, a control character or a would-be secret in a broken line stays unquoted).
 *
 * Decisions: CRLF line ends are tolerated (a Windows tool may write them, and the signature covers
 * the exact bytes either way); blank lines are skipped; `sha256sum -b`'s ` *` separator is
 * accepted beside the two spaces; upper-case hex is refused, as the format says lower-case.
 */

export interface ManifestEntry {
  /** Normalised with `stickPath`: relative, `/`, no `.` segments. */
  path: string;
  sha256: string;
  /** 1-based line in mpprov.sha256. */
  line: number;
}

interface ManifestProblem {
  line: number;
  column: number;
  message: string;
  hint?: string;
}

export interface ParsedManifest {
  /** Only the lines that passed every check. */
  entries: ManifestEntry[];
  problems: ManifestProblem[];
}

const HEX_LENGTH = 64;
/** Where the path starts: after the hash and the two-character separator. */
export const PATH_COLUMN = HEX_LENGTH + 3;
const FORMAT_HINT = 'each line is <64 lower-case hex digits>, two spaces, the path (mpprov sign writes this file)';

export function parseManifest(bytes: Buffer): ParsedManifest {
  const entries: ManifestEntry[] = [];
  const problems: ManifestProblem[] = [];
  if (bytes.length > SIGNATURE_LIMITS.manifestBytes) {
    problems.push({
      line: 1,
      column: 1,
      message: `the file is ${bytes.length} bytes; the limit is 256 KiB`,
      hint: "list only the stick's own files",
    });
    return { entries, problems };
  }
  const lines = splitLines(bytes, SIGNATURE_LIMITS.manifestLines + 1);
  if (lines.length > SIGNATURE_LIMITS.manifestLines) {
    problems.push({
      line: SIGNATURE_LIMITS.manifestLines + 1,
      column: 1,
      message: `the file has more than ${SIGNATURE_LIMITS.manifestLines} lines`,
      hint: "list only the stick's own files",
    });
    return { entries, problems };
  }
  const utf8 = new TextDecoder('utf-8', { fatal: true });
  const seen = new Map<string, ManifestEntry>();
  const seenFolded = new Map<string, ManifestEntry>();
  lines.forEach((raw, index) => {
    const line = index + 1;
    const problem = (column: number, message: string, hint?: string): void => {
      problems.push({ line, column, message, ...(hint === undefined ? {} : { hint }) });
    };
    if (raw.includes(0)) return problem(1, 'the line holds a NUL byte', FORMAT_HINT);
    let text: string;
    try {
      text = utf8.decode(raw);
    } catch {
      return problem(1, 'the line is not UTF-8 text', FORMAT_HINT);
    }
    if (text === '') return undefined;
    // sha256sum starts a line with a backslash when it escaped a backslash or line break in the name.
    if (text.startsWith('\\'))
      return problem(
        1,
        'the line names a file with a backslash or line break (sha256sum escaped it)',
        'rename the file to plain characters',
      );
    const hash = text.slice(0, HEX_LENGTH);
    const separator = text.slice(HEX_LENGTH, HEX_LENGTH + 2);
    if (!/^[0-9a-fA-F]{64}$/.test(hash) || (separator !== '  ' && separator !== ' *')) {
      return problem(1, 'the line is not a SHA-256 and a path as sha256sum prints them', FORMAT_HINT);
    }
    if (hash !== hash.toLowerCase()) return problem(1, 'the SHA-256 is not written in lower-case hex', FORMAT_HINT);
    const path = stickPath(text.slice(HEX_LENGTH + 2));
    if (!path.ok) return problem(PATH_COLUMN, path.reason, path.hint);
    if (UNLISTABLE_NAMES.some((name) => foldCase(name) === foldCase(path.path))) {
      return problem(
        PATH_COLUMN,
        `${quotePath(path.path)} cannot be listed: it is the list itself, its signature, or a file the agent writes on the stick`,
        'remove this line',
      );
    }
    const before = seen.get(path.path) ?? seenFolded.get(foldCase(path.path));
    if (before !== undefined) {
      const twice =
        before.path === path.path
          ? 'is listed twice'
          : `is listed twice, letter case aside (a FAT stick does not tell ${quotePath(before.path)} from it)`;
      return problem(
        PATH_COLUMN,
        `${quotePath(path.path)} ${twice}: lines ${before.line} and ${line}`,
        'keep one line per file',
      );
    }
    const entry = { path: path.path, sha256: hash, line };
    seen.set(entry.path, entry);
    seenFolded.set(foldCase(entry.path), entry);
    entries.push(entry);
    return undefined;
  });
  if (problems.length === 0 && entries.length === 0)
    problems.push({ line: 1, column: 1, message: 'the file lists no files', hint: FORMAT_HINT });
  return { entries, problems };
}

/**
 * Lines split on LF; one CR before it is part of the line end; a final line end adds no line.
 * Stops at `max` lines: a file of blank lines is not split any further than that.
 */
function splitLines(bytes: Buffer, max: number): Buffer[] {
  const lines: Buffer[] = [];
  let start = 0;
  while (start < bytes.length && lines.length < max) {
    let end = bytes.indexOf(0x0a, start);
    if (end === -1) end = bytes.length;
    const contentEnd = end > start && bytes[end - 1] === 0x0d ? end - 1 : end;
    lines.push(bytes.subarray(start, contentEnd));
    start = end + 1;
  }
  return lines;
}

/** The list as `sha256sum` prints it, for paths that passed `stickPath`. */
export function formatManifest(entries: readonly { path: string; sha256: string }[]): Buffer {
  return Buffer.from(entries.map((e) => `${e.sha256}  ${e.path}\n`).join(''), 'utf8');
}

export function sha256Hex(bytes: Buffer): string {
  return createHash('sha256').update(bytes).digest('hex');
}
