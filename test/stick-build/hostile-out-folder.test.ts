import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { buildSticks } from '../../src/stick-build/index.js';
import { fixtureCopy } from './stick-build-rig.js';

/**
 * `--out` where the file system refuses a new folder with ENOENT although its parent exists
 * (/proc, /sys): Node's recursive mkdir never returns there, and the build hung at full CPU.
 */
describe('stick build with --out under /proc', () => {
  it('fails with a sentence naming the folder instead of hanging', { timeout: 20_000 }, async () => {
    const { dir } = fixtureCopy('hostile-out-folder');
    const result = await buildSticks({
      inventory: join(dir, 'fleet.yaml'),
      template: join(dir, 'template.yaml'),
      out: '/proc/self/mpprov-sticks',
      secretsDir: join(dir, 'secrets'),
      image: false,
    });
    expect(result.ran).toBe(false);
    expect(result.problems.map((p) => [p.file, p.message])).toEqual([
      ['/proc/self/mpprov-sticks', 'the --out folder cannot be made (ENOENT)'],
    ]);
  });
});
