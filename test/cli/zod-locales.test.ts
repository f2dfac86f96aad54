import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { localesStandIn, zodLocaleNames, zodLocalesFolder } from '../../packaging/zod-locales.mjs';
import { repoRoot, runCli } from '../support/run-cli.js';
import { tempFolder } from '../support/temp-folder.js';

/**
 * zod's 50 locales stay out of the bundles (packaging/zod-locales.mjs): `z.locales` keeps every
 * name, English is zod's own, the others say they are not bundled.
 */
describe("zod's locales in the bundle", () => {
  it('lists every locale zod exports, so z.locales keeps its shape', () => {
    expect(zodLocaleNames().sort()).toEqual(Object.keys(z.locales).sort());
  });

  it('keeps English and makes every other locale say it is not bundled', async () => {
    // The stand-in as esbuild gets it, beside zod's English (which imports zod's core) by its URL.
    const english = pathToFileURL(join(zodLocalesFolder(), 'en.js')).href;
    const source = localesStandIn(zodLocaleNames()).replace('"./en.js"', JSON.stringify(english));
    expect(source).toContain(english);
    const standIn = join(tempFolder('zod-locales'), 'index.mjs');
    writeFileSync(standIn, source);
    const locales = (await import(pathToFileURL(standIn).href)) as Record<string, () => unknown>;
    expect(Object.keys(locales).sort()).toEqual(Object.keys(z.locales).sort());
    expect(locales.en?.()).toMatchObject({ localeError: expect.any(Function) as unknown });
    expect(() => locales.nl?.()).toThrow("zod's locale nl is not in mpprov's bundle");
  });

  it('leaves the other languages out of both bundles, and validation speaks English', async () => {
    // A Dutch message zod has, in ASCII (the bundles escape every other character).
    expect(readFileSync(join(zodLocalesFolder(), 'nl.js'), 'utf8')).toContain('Ongeldige invoer');
    for (const bundle of ['dist/mpprov-app.cjs', 'dist/mpprov-apply.cjs']) {
      const text = readFileSync(join(repoRoot, bundle), 'latin1');
      expect(text, bundle).not.toContain('Ongeldige invoer');
      expect(text, bundle).toContain("is not in mpprov's bundle");
    }
    const folder = tempFolder('zod-locales');
    writeFileSync(join(folder, 'mpprov.yaml'), 'version: "one"\n');
    const result = await runCli(['validate', join(folder, 'mpprov.yaml')]);
    expect(result.code).toBe(1);
    expect(result.stdout).toMatch(/version/);
    expect(result.stdout).toMatch(/expected|must|invalid/i);
  });
});
