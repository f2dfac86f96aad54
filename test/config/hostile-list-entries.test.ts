import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { loadStick } from '../../src/config/index.js';
import { tempFolder } from '../support/temp-folder.js';

/** Type-confused list entries (a number, an empty `-`, a list) each get their own located sentence. */
describe('a list of monitoring points with entries of the wrong kind', () => {
  it('names an empty entry as an entry, not as a key named by its index', async () => {
    const dir = tempFolder('list-entries');
    writeFileSync(join(dir, 'mpprov.yaml'), 'version: 1\nmonitoring_points: [5, null, ~, []]\n');
    const loaded = await loadStick(join(dir, 'mpprov.yaml'), { label: 'mpprov.yaml' });
    expect(loaded.problems.map((p) => `${p.line}:${p.column} ${p.path} ${p.message} (${p.hint ?? ''})`)).toEqual([
      '2:21 monitoring_points[0] must be a block of keys, not a whole number ()',
      '2:24 monitoring_points[1] this list entry is empty (give it a value, or remove the - line)',
      '2:30 monitoring_points[2] this list entry is empty (give it a value, or remove the - line)',
      '2:33 monitoring_points[3] must be a block of keys, not a list (write a block of keys here, not a list)',
    ]);
  });
});
