// The small part of Markdown the project's docs use, as man(7) roff: headings, paragraphs, bullet
// lists, fenced code and tables (as tagged paragraphs: a man page has no room for wide tables).
// Enough for docs/*.md; anything else is kept as plain text rather than guessed at.

/** Text for roff: backslashes escaped, and a line never starts with a control character. */
export function roffText(text) {
  return text.replace(/\\/g, '\\e');
}

/** A hyphen in code (an option, a path) is a minus sign in a man page: copyable, never hyphenated. */
function roffCode(text) {
  return roffText(text).replace(/-/g, '\\-');
}

/** Inline Markdown: `code` in bold, **bold**, [text](link) as its text. */
export function roffInline(text) {
  const parts = text.split(/(`[^`]*`)/);
  return parts
    .map((part) => {
      if (part.startsWith('`') && part.endsWith('`') && part.length >= 2)
        return `\\fB${roffCode(part.slice(1, -1))}\\fR`;
      return roffText(part)
        .replace(/\*\*([^*]+)\*\*/g, '\\fB$1\\fR')
        .replace(/\[([^\]]+)\]\([^)]+\)/g, '$1');
    })
    .join('');
}

/** A line of running text: `.` and `'` at its start would be read as requests. */
function line(text) {
  return /^[.']/.test(text) ? `\\&${text}` : text;
}

function cells(row) {
  return row
    .trim()
    .replace(/^\|/, '')
    .replace(/\|$/, '')
    .split(/(?<!\\)\|/)
    .map((c) => c.trim().replace(/\\\|/g, '|'));
}

/**
 * Markdown to roff. `level` maps heading depth to a request: by default `##` is a section (.SH) and
 * `###` a subsection (.SS); the first `#` heading is dropped (the man page's NAME says it).
 */
export function markdownToRoff(markdown, { sectionDepth = 2 } = {}) {
  const out = [];
  const lines = markdown.split('\n');
  let i = 0;
  let paragraph = [];
  const flush = () => {
    if (paragraph.length > 0) out.push('.PP', ...paragraph.map((l) => line(roffInline(l))));
    paragraph = [];
  };
  while (i < lines.length) {
    const text = lines[i] ?? '';
    const heading = /^(#+)\s+(.*)$/.exec(text);
    if (heading !== null) {
      flush();
      const depth = heading[1].length;
      if (depth >= sectionDepth) {
        const title = roffInline(heading[2]).replace(/"/g, '\\(dq');
        out.push(depth === sectionDepth ? `.SH "${title.toUpperCase()}"` : `.SS "${title}"`);
      }
      i++;
    } else if (text.startsWith('```')) {
      flush();
      const code = [];
      for (i++; i < lines.length && !(lines[i] ?? '').startsWith('```'); i++) code.push(lines[i] ?? '');
      i++;
      out.push('.PP', '.RS 4', '.nf', ...code.map((l) => line(roffCode(l))), '.fi', '.RE');
    } else if (/^\s*\|/.test(text)) {
      flush();
      const rows = [];
      for (; i < lines.length && /^\s*\|/.test(lines[i] ?? ''); i++) rows.push(cells(lines[i] ?? ''));
      const [header = [], , ...body] = rows;
      for (const row of body) {
        const [tag = '', ...rest] = row;
        // Middle columns (a default) follow the last one (the meaning), named by their header.
        const middle = rest
          .slice(0, -1)
          .map((c, n) => (c === '' ? '' : `${header[n + 1] ?? ''}: ${c}`))
          .filter((c) => c !== '');
        const last = rest.at(-1) ?? '';
        const text = middle.length === 0 ? last : `${last} (${middle.join('; ')})`;
        out.push(
          tag === '' ? '.IP' : '.TP',
          ...(tag === '' ? [] : [line(roffInline(tag))]),
          line(roffInline(text.trim())),
        );
      }
    } else if (/^\s*[-*] /.test(text)) {
      flush();
      // A bullet and its indented continuation lines.
      const item = [text.replace(/^\s*[-*] /, '')];
      for (i++; i < lines.length && /^\s{2,}\S/.test(lines[i] ?? '') && !/^\s*[-*] /.test(lines[i] ?? ''); i++)
        item.push((lines[i] ?? '').trim());
      out.push('.IP \\(bu 2', ...item.map((l) => line(roffInline(l))));
    } else if (text.trim() === '') {
      flush();
      i++;
    } else {
      paragraph.push(text.trim());
      i++;
    }
  }
  flush();
  return out.join('\n');
}
