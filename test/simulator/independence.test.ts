import { readdir, readFile } from 'node:fs/promises';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';

/**
 * The simulator is a product of its own: from the agent it takes only the device's
 * vocabulary in src/admin-api, so a bug in the agent's stages cannot hide in the device the agent
 * is tested against. Read from the sources, as a reviewer would check it.
 */

const SIMULATOR = fileURLToPath(new URL('../../src/simulator/', import.meta.url));

async function specifiers(): Promise<{ file: string; specifier: string }[]> {
  const files = (await readdir(SIMULATOR)).filter((f) => f.endsWith('.ts'));
  const found: { file: string; specifier: string }[] = [];
  for (const file of files) {
    const text = await readFile(`${SIMULATOR}${file}`, 'utf8');
    // Static imports and re-exports (over several lines too), side-effect imports, dynamic imports;
    // not any `from('...')` call in the code (Buffer.from with a quoted string once counted).
    for (const pattern of [
      /^\s*(?:import|export)\s[^;]*?\sfrom\s*'([^']+)'/gm,
      /^\s*import\s*'([^']+)'/gm,
      /\bimport\(\s*'([^']+)'/g,
    ]) {
      for (const match of text.matchAll(pattern)) found.push({ file, specifier: match[1] ?? '' });
    }
  }
  return found;
}

describe('the simulator', () => {
  it('imports from outside its folder only the device vocabulary in src/admin-api', async () => {
    const all = await specifiers();
    expect(all.length).toBeGreaterThan(50);
    const outside = all.filter((i) => i.specifier.startsWith('../'));
    expect(outside.length).toBeGreaterThan(0);
    expect(outside.filter((i) => !i.specifier.startsWith('../admin-api/'))).toEqual([]);
  });

  it("reads and writes certificates with maintained libraries of its own, never the product's node-forge", async () => {
    const packages = (await specifiers()).filter(
      (i) => !i.specifier.startsWith('.') && !i.specifier.startsWith('node:'),
    );
    expect(packages.length).toBeGreaterThan(0);
    expect([...new Set(packages.map((i) => i.specifier))].sort()).toEqual([
      '@peculiar/asn1-cms',
      '@peculiar/asn1-pfx',
      '@peculiar/asn1-pkcs8',
      '@peculiar/asn1-schema',
      '@peculiar/asn1-x509',
      'asn1js',
      'undici',
      'yaml',
      'zod',
    ]);
  });
});
