/**
 * What the docs test needs to know about a Markdown file, read the way GitHub renders it: its
 * headings' anchors, its relative links and its prose paragraphs. Code fences and inline code are
 * left out of links and paragraphs (a `[x](y)` inside them is text, not a link).
 */

/** A line that opens or closes a fenced code block. */
const FENCE = /^\s*(```|~~~)/;

/** The lines of a Markdown text outside fenced code blocks, with their line numbers (1-based). */
function linesOutsideFences(text: string): { line: number; text: string }[] {
  const out: { line: number; text: string }[] = [];
  let inFence = false;
  text.split('\n').forEach((line, index) => {
    if (FENCE.test(line)) {
      inFence = !inFence;
      out.push({ line: index + 1, text: '' });
      return;
    }
    out.push({ line: index + 1, text: inFence ? '' : line });
  });
  return out;
}

/**
 * GitHub's anchor for a heading (github-slugger): lower case, every character that is not a
 * letter, mark, number, connector (`_`), space or hyphen removed, each space a hyphen. Runs of
 * hyphens are kept, as GitHub keeps them (`validate --json` is `validate---json`).
 */
export function githubSlug(heading: string): string {
  return heading
    .toLowerCase()
    .replace(/[^\p{L}\p{M}\p{N}\p{Pc} -]/gu, '')
    .replace(/ /g, '-');
}

/** A heading's text as rendered: link text kept, code and emphasis marks dropped. */
function renderedHeading(raw: string): string {
  return raw
    .replace(/!?\[([^\]]*)\]\([^)]*\)/g, '$1')
    .replace(/`/g, '')
    .replace(/\*/g, '')
    .trim();
}

/** Every anchor a file's headings give, with GitHub's `-1`, `-2` for repeated headings. */
export function headingAnchors(text: string): Set<string> {
  const anchors = new Set<string>();
  const seen = new Map<string, number>();
  for (const { text: line } of linesOutsideFences(text)) {
    const match = /^#{1,6}\s+(.*?)\s*#*\s*$/.exec(line);
    if (match === null) continue;
    const slug = githubSlug(renderedHeading(match[1] ?? ''));
    const count = seen.get(slug) ?? 0;
    seen.set(slug, count + 1);
    anchors.add(count === 0 ? slug : `${slug}-${count}`);
  }
  return anchors;
}

export interface MarkdownLink {
  line: number;
  target: string;
}

/** Every link of a file that stays in the repository: no scheme (http:, mailto:), no bare URL. */
export function relativeLinks(text: string): MarkdownLink[] {
  const links: MarkdownLink[] = [];
  for (const { line, text: raw } of linesOutsideFences(text)) {
    const prose = raw.replace(/`[^`]*`/g, '');
    for (const match of prose.matchAll(/\[[^\]]*\]\(\s*<?([^)\s>]+)>?(?:\s+"[^"]*")?\s*\)/g)) {
      const target = match[1] ?? '';
      if (/^[a-z][a-z0-9+.-]*:/i.test(target)) continue;
      links.push({ line, target });
    }
  }
  return links;
}

/**
 * The prose paragraphs of a file, each on one line with its whitespace collapsed: blocks between
 * blank lines, each list item on its own; headings, tables and code left out.
 */
export function proseParagraphs(text: string): string[] {
  const paragraphs: string[] = [];
  let current: string[] = [];
  const flush = () => {
    const paragraph = current.join(' ').replace(/\s+/g, ' ').trim();
    if (paragraph !== '') paragraphs.push(paragraph);
    current = [];
  };
  let inFence = false;
  for (const line of text.split('\n')) {
    if (FENCE.test(line)) {
      flush();
      inFence = !inFence;
      continue;
    }
    if (inFence) continue;
    if (line.trim() === '' || /^\s*(#{1,6}\s|\|)/.test(line)) {
      flush();
      continue;
    }
    const item = /^\s*(?:[-*+]|\d+\.)\s+(.*)$/.exec(line);
    if (item !== null) {
      flush();
      current.push(item[1] ?? '');
      continue;
    }
    current.push(line);
  }
  flush();
  return paragraphs;
}

/** A paragraph worth keeping in one place: two sentences or more, or 200 characters or more. */
export function isSubstantial(paragraph: string): boolean {
  const sentenceEnds = paragraph.match(/[.!?](?=\s|$)/g) ?? [];
  return sentenceEnds.length >= 2 || paragraph.length >= 200;
}
