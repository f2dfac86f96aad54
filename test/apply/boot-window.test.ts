import { describe, expect, it } from 'vitest';
import { ErrorCode } from '../../src/core/errors.js';
import { type ApplyEvent, MP_BOOTING } from '../../src/apply/index.js';
import type { SimulatorHandle } from '../../src/simulator/index.js';
import { createEventFormatter } from '../../src/report/job-log-format.js';
import { useSimulators } from '../support/simulator-fixture.js';
import { PROFILE_DEVICE, stickHead, stickWithConfig } from '../support/stick-workspace.js';
import { applyFile } from './apply-helpers.js';

/**
 * An MP that is still booting refuses the first connection. Within the boot window (agent.yaml
 * timeouts.connect_s) it is waited for, with a live "waiting for the MP to answer" line, instead
 * of failing at the first refused connection. Against a simulator started late on the same port.
 */

const { start } = useSimulators(PROFILE_DEVICE);
const eth1 = '    interfaces:\n      eth1:\n        ipv4: { method: dhcp }\n';

describe('the boot window at the first contact', () => {
  it('a device that starts answering late is waited for and configured; the wait is said in usb.log words', async () => {
    const first = await start();
    const port = Number(new URL(first.url).port);
    const file = stickWithConfig(stickHead(first, eth1));
    await first.close();

    // Started only once the job has met the refused connection and waits for the MP.
    const events: ApplyEvent[] = [];
    let late: Promise<SimulatorHandle> | undefined;
    const { result } = await applyFile(file, {
      connectWindowMs: 30_000,
      onEvent: (event) => {
        events.push(event);
        if (event.type === 'waiting' && late === undefined) late = start({ port });
      },
    });
    expect(late).toBeDefined();
    expect((await late!).url).toBe(first.url);
    expect(result.devices[0]?.outcome, result.devices[0]?.message).toBe('changed');
    const waits = events.filter((e) => e.type === 'waiting' && e.description === MP_BOOTING);
    expect(waits.length).toBeGreaterThan(0);
    const format = createEventFormatter();
    const lines = events.flatMap((e) => format(e)).map((l) => l.text);
    expect(
      lines.some((l) => /^\[mp1\] waiting for the MP to answer \(\d+\.\d s; it may still be booting\): /.test(l)),
    ).toBe(true);
  });

  it('without a boot window (mpprov apply) the first refused connection is the result', async () => {
    const device = await start();
    const file = stickWithConfig(stickHead(device, eth1));
    await device.close();
    const { result, events } = await applyFile(file);
    expect(result.devices[0]?.code).toBe(ErrorCode.DeviceUnreachable);
    expect(events.filter((e) => e.type === 'waiting')).toEqual([]);
  });

  it('a device that never answers within the window fails as not answering, after the waiting lines', async () => {
    const device = await start();
    const file = stickWithConfig(stickHead(device, eth1));
    await device.close();
    const { result, events } = await applyFile(file, { connectWindowMs: 1_500 });
    expect(result.devices[0]?.outcome).toBe('failed');
    expect(result.devices[0]?.code).toBe(ErrorCode.DeviceNotAnswering);
    expect(events.some((e) => e.type === 'waiting' && e.description === MP_BOOTING)).toBe(true);
  });
});
