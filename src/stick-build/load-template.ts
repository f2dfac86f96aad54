import { readFile, stat } from 'node:fs/promises';
import { dirname } from 'node:path';
import { type Document, isMap, LineCounter, parseDocument } from 'yaml';
import type { Problem } from '../core/problem.js';
import { decodeUtf8 } from './decode-utf8.js';
import { positionIn, problemAt } from './place.js';

/** The template (docs/rolling-out.md): one monitoring point with placeholders, parsed once. */
export interface Template {
  file: string;
  /** Where the files it names are copied from: the template's folder, or `--files`. */
  filesDir: string;
  doc: Document;
  lines: LineCounter;
}

const MAX_TEMPLATE_BYTES = 256 * 1024;

export async function loadTemplate(
  file: string,
  filesDir?: string,
): Promise<{ ok: true; template: Template } | { ok: false; problems: Problem[] }> {
  const at = (line: number, column: number, message: string, hint?: string): Problem =>
    problemAt({ file, line, column }, message, hint);
  let bytes: Buffer;
  try {
    // Looked at first: a FIFO would hold the read forever, /dev/zero would never end.
    const info = await stat(file);
    if (!info.isFile()) return { ok: false, problems: [at(1, 1, 'the template is not a file')] };
    if (info.size > MAX_TEMPLATE_BYTES)
      return { ok: false, problems: [at(1, 1, `the template is ${info.size} bytes; the limit is 256 KiB`)] };
    bytes = await readFile(file);
  } catch (error) {
    return {
      ok: false,
      problems: [at(1, 1, `the template cannot be read (${(error as NodeJS.ErrnoException).code ?? 'error'})`)],
    };
  }
  if (bytes.length > MAX_TEMPLATE_BYTES)
    return { ok: false, problems: [at(1, 1, `the template is ${bytes.length} bytes; the limit is 256 KiB`)] };
  const text = decodeUtf8(bytes, file);
  if (!text.ok) return { ok: false, problems: [text.problem] };
  const lines = new LineCounter();
  const doc = parseDocument(text.text, {
    lineCounter: lines,
    uniqueKeys: true,
    prettyErrors: false,
    logLevel: 'error',
  });
  if (doc.errors.length > 0) {
    return {
      ok: false,
      problems: doc.errors
        .slice(0, 20)
        .map((error) =>
          problemAt(
            { file, ...positionIn(text.text, error.pos[0]) },
            `not YAML: ${error.code.toLowerCase().replaceAll('_', ' ')}`,
            'a placeholder inside a flow mapping { ... } must be quoted; write the template in block style',
          ),
        ),
    };
  }
  if (!isMap(doc.contents))
    return {
      ok: false,
      problems: [at(1, 1, 'the template must be one monitoring point: a mapping with name, url and the rest')],
    };
  return { ok: true, template: { file, filesDir: filesDir ?? dirname(file), doc, lines } };
}
