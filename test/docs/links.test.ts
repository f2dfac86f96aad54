import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs';
import { dirname, join, relative, resolve } from 'node:path';
import { describe, expect, it } from 'vitest';
import { repoRoot } from '../support/run-cli.js';
import { githubSlug, headingAnchors, isSubstantial, proseParagraphs, relativeLinks } from './markdown-outline.js';

/**
 * The README is the newcomer's page and docs/ the reference: every link between them resolves, the
 * README stays short, and it says nothing at length that a doc already says (a fact kept in two
 * places drifts apart).
 */

const README = join(repoRoot, 'README.md');
const docsDir = join(repoRoot, 'docs');
const docs = readdirSync(docsDir)
  .filter((name) => name.endsWith('.md'))
  .sort()
  .map((name) => join(docsDir, name));
const pages = [README, ...docs];
const read = (file: string) => readFileSync(file, 'utf8');

/** Each broken link as `FILE:LINE: TARGET (why)`. */
function brokenLinks(file: string, text: string, anchorsOf: (file: string) => Set<string>): string[] {
  const broken: string[] = [];
  for (const { line, target } of relativeLinks(text)) {
    const [path = '', anchor] = target.split('#', 2);
    const where = `${relative(repoRoot, file)}:${line}: ${target}`;
    const resolved = path === '' ? file : resolve(dirname(file), decodeURIComponent(path));
    // An anchor alone points into the page itself, which need not be on disk (the rig's own page).
    if (path !== '' && !existsSync(resolved)) {
      broken.push(`${where} (no such file)`);
      continue;
    }
    if (anchor === undefined) continue;
    if (!resolved.endsWith('.md') || (path !== '' && statSync(resolved).isDirectory())) {
      broken.push(`${where} (an anchor into a file that is not Markdown)`);
    } else if (!anchorsOf(resolved).has(anchor)) {
      broken.push(`${where} (no heading with that anchor)`);
    }
  }
  return broken;
}

const anchorsOfFile = (file: string) => headingAnchors(read(file));

describe('GitHub anchors', () => {
  it('are made from headings as GitHub makes them', () => {
    expect(githubSlug('mpprov plan and mpprov apply')).toBe('mpprov-plan-and-mpprov-apply');
    expect(githubSlug('802.1X on the wire')).toBe('8021x-on-the-wire');
    expect(githubSlug('validate --json')).toBe('validate---json');
    expect(githubSlug("What holds the agent's memory")).toBe('what-holds-the-agents-memory');
    expect(githubSlug('The agent config: agent.yaml')).toBe('the-agent-config-agentyaml');
    expect([...headingAnchors('# A\n## `B` and [c](x.md)\n```\n# not a heading\n```\n## A\n')]).toEqual([
      'a',
      'b-and-c',
      'a-1',
    ]);
  });

  it('catch a link to a missing file or heading, and ignore code and web addresses', () => {
    const text = [
      '# Top',
      '[ok](#top) [gone](#nowhere) [file](README.md) [missing](no-such-file.md) [web](https://example.com/x.md)',
      '`[code](not-a-link.md)`',
      '```',
      '[fenced](not-a-link-either.md)',
      '```',
    ].join('\n');
    const file = join(repoRoot, 'page.md');
    expect(brokenLinks(file, text, (f) => (f === file ? headingAnchors(text) : anchorsOfFile(f)))).toEqual([
      'page.md:2: #nowhere (no heading with that anchor)',
      'page.md:2: no-such-file.md (no such file)',
    ]);
  });
});

describe('README.md and docs/', () => {
  it('link only to files that exist and to headings they have', () => {
    expect(docs.length).toBeGreaterThan(5);
    const links = pages.flatMap((file) => relativeLinks(read(file)));
    expect(links.length).toBeGreaterThan(20);
    expect(pages.flatMap((file) => brokenLinks(file, read(file), anchorsOfFile))).toEqual([]);
  });

  it('the README links to every document in docs/', () => {
    const linked = new Set(
      relativeLinks(read(README)).map(({ target }) => resolve(repoRoot, target.split('#')[0] ?? '')),
    );
    expect(docs.filter((doc) => !linked.has(doc)).map((doc) => relative(repoRoot, doc))).toEqual([]);
  });

  it('the README is at most 320 lines', () => {
    expect(read(README).split('\n').length).toBeLessThanOrEqual(320);
  });

  it('no paragraph of the README is repeated word for word in a doc', () => {
    const paragraphs = proseParagraphs(read(README)).filter(isSubstantial);
    expect(paragraphs.length).toBeGreaterThan(5);
    const docTexts = docs.map((doc) => ({ doc, text: read(doc).replace(/\s+/g, ' ') }));
    const repeated = paragraphs.flatMap((paragraph) =>
      docTexts
        .filter(({ text }) => text.includes(paragraph))
        .map(({ doc }) => `${relative(repoRoot, doc)}: ${paragraph.slice(0, 80)}...`),
    );
    expect(repeated).toEqual([]);
  });
});
