import { describe, expect, it } from 'vitest';
import { repoRoot, useProcesses } from '../support/run-cli.js';

/**
 * A hostile Retry-After (999999 s, or a date in 2100) pauses the shared limiter for its cap; a
 * waiter that gives up (its post-check wait ran out) must not leave the pause timer keeping the
 * process alive: `mpprov apply` ends when its result is printed, not a minute later.
 */
const processes = useProcesses();

describe('the data API rate limiter', () => {
  it('lets the process end once its last waiter gave up during a long pause', async () => {
    const script = `
      import { RateLimiter } from '${repoRoot}dist/service/index.js';
      const limiter = new RateLimiter({ requests: 1, windowMs: 10_000 });
      limiter.pauseUntil(Date.now() + 60_000);
      await limiter.acquire(AbortSignal.timeout(100)).then(() => console.log('turn'), () => console.log('gave up'));
    `;
    const started = Date.now();
    const child = await processes.startNode(['--input-type=module', '-e', script]);
    const exited = await child.exited;
    expect(exited).toEqual({ code: 0, signal: null });
    expect(child.stdout()).toBe('gave up\n');
    // Without the fix the process lives until the 60 s pause ends; 20 s leaves room for a loaded machine.
    expect(Date.now() - started).toBeLessThan(20_000);
  }, 90_000);
});
