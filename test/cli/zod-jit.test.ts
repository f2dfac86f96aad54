import { config, z } from 'zod';
import { describe, expect, it } from 'vitest';
import { configureZodFor } from '../../src/cli/zod-jit.js';

/**
 * Short commands parse without zod's compiled fast path (it costs more than it saves in a process
 * that exits after one job); the long-running ones keep it. The results are zod's either way:
 * the same schema gives the same data and the same issues built before and after.
 */
describe("zod's compiled parsers", () => {
  const Answer = () => z.object({ name: z.string(), mtu: z.number().int().min(68), tags: z.array(z.string()) });
  const inputs: unknown[] = [
    { name: 'eth1', mtu: 1500, tags: ['a'], extra: 1 },
    { name: 'eth1', mtu: 20, tags: [] },
    { name: 7, mtu: 'x', tags: [1] },
    null,
  ];

  it('are kept by the long-running commands and left out by every other command line', async () => {
    for (const words of [['run'], ['simulate', '--port', '0'], ['notify'], ['observe']]) {
      await configureZodFor(words);
      expect(config().jitless).toBeUndefined();
    }
    const compiled = inputs.map((input) => Answer().safeParse(input));
    await configureZodFor(['apply', 'mpprov.yaml']);
    expect(config().jitless).toBe(true);
    const general = inputs.map((input) => Answer().safeParse(input));
    expect(general.map((r) => r.success)).toEqual([true, false, false, false]);
    expect(general).toEqual(compiled);
  });
});
