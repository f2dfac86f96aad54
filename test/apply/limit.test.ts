import { describe, expect, it } from 'vitest';
import { isMpprovError, ErrorCode } from '../../src/core/errors.js';
import { useSimulators } from '../support/simulator-fixture.js';
import { PROFILE_DEVICE, stickWithConfig, stickYaml } from '../support/stick-workspace.js';
import { applyFile } from './apply-helpers.js';

/**
 * The engine's `limit` (the CLI's --limit; the daemon never sets it): the devices left out get no
 * request and no result slot, and the result's lists hold the selected devices in file order.
 */
const { start } = useSimulators(PROFILE_DEVICE);

/** stickYaml's password files are secrets/<name>.pw; with PROFILE_DEVICE every device takes admin.pw. */
function stickFor(text: string): string {
  return stickWithConfig(text.replaceAll(/secrets\/mp\d\.pw/g, 'secrets/admin.pw'));
}

describe('applyStick with limit', () => {
  it('provisions only the named devices; the others get no request', async () => {
    const [a, b, c] = [await start(), await start(), await start()];
    const file = stickFor(
      stickYaml([
        { name: 'mp1', sim: a },
        { name: 'mp2', sim: b, address: '192.0.2.12' },
        { name: 'mp3', sim: c, address: '192.0.2.13' },
      ]),
    );
    const { result, events } = await applyFile(file, { limit: ['mp3', 'mp1'] });
    expect(result.outcome).toBe('changed');
    expect(result.devices.map((d) => d.device)).toEqual(['mp1', 'mp3']);
    expect(result.plans.map((p) => p.device.name)).toEqual(['mp1', 'mp3']);
    expect(
      events
        .filter((e) => e.type === 'device-start')
        .map((e) => e.device)
        .sort(),
    ).toEqual(['mp1', 'mp3']);
    expect(b.requests()).toEqual([]);
    expect(a.requests().length).toBeGreaterThan(0);
    expect(c.requests().length).toBeGreaterThan(0);
  });

  it('a name the file lacks: a usage error before any request', async () => {
    const [a, b] = [await start(), await start()];
    const file = stickFor(
      stickYaml([
        { name: 'mp1', sim: a },
        { name: 'mp2', sim: b, address: '192.0.2.12' },
      ]),
    );
    const error: unknown = await applyFile(file, { limit: ['mp1', 'mp9'] }).then(
      () => undefined,
      (e: unknown) => e,
    );
    expect(isMpprovError(error) && error.code).toBe(ErrorCode.Usage);
    expect(error instanceof Error && error.message).toBe(
      `--limit names 'mp9', which is not a monitoring point of ${file} (did you mean 'mp1'?); its monitoring points are 'mp1', 'mp2'`,
    );
    expect(a.requests()).toEqual([]);
    expect(b.requests()).toEqual([]);
  });
});
