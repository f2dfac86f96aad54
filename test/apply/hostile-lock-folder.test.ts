import { describe, expect, it } from 'vitest';
import { lockDeviceAt } from '../../src/apply/device-file-lock.js';

/**
 * A state folder where the file system refuses new folders with ENOENT although their parent
 * exists (/proc, /sys: a mistyped --state-dir or state_dir): Node's recursive mkdir never returns
 * there, so `apply --lock-wait` hung before its first device.
 */
describe('the device lock in a state folder under /proc', () => {
  it('fails the device with a sentence instead of hanging', { timeout: 10_000 }, async () => {
    const taken = await lockDeviceAt('https://127.0.0.1:1', {
      stateDir: '/proc/self/mpprov-state',
      waitMs: 1_000,
      run: 'mpprov apply test',
    });
    expect(taken).toEqual({ failure: expect.stringContaining('/proc/self/mpprov-state') as unknown });
  });
});
