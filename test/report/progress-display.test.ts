import { Writable } from 'node:stream';
import { describe, expect, it } from 'vitest';
import { createProgressDisplay } from '../../src/report/index.js';

function sink(): { stream: Writable; text: () => string } {
  let out = '';
  const stream = new Writable({
    write(chunk, _enc, done) {
      out += String(chunk);
      done();
    },
  });
  return { stream, text: () => out };
}

describe('progress display', () => {
  it('on a terminal redraws a step list with elapsed times in place', () => {
    const { stream, text } = sink();
    const display = createProgressDisplay(stream, { tty: true });
    display.onEvent({ type: 'device-start', device: 'mp1', url: 'https://127.0.0.1:1' });
    display.onEvent({
      type: 'step-start',
      device: 'mp1',
      index: 0,
      total: 2,
      description: 'restart networking (1 stanza change(s))',
    });
    display.onEvent({
      type: 'waiting',
      device: 'mp1',
      description: 'restart networking',
      elapsedMs: 1500,
      reason: 'connection refused',
    });
    display.onEvent({
      type: 'step-done',
      device: 'mp1',
      index: 0,
      description: 'restart networking (1 stanza change(s))',
      elapsedMs: 3200,
    });
    display.stop();
    const out = text();
    expect(out).toContain('\x1b[2Kmp1 (https://127.0.0.1:1)\n');
    expect(out).toContain('[~] restart networking (1 stanza change(s))');
    expect(out).toContain('not answering yet, as expected (connection refused)');
    expect(out).toContain('\x1b[2K  [x] restart networking (1 stanza change(s))  3.2 s');
    // eslint-disable-next-line no-control-regex -- the terminal's cursor-up sequence is what is looked for
    expect(out).toMatch(/\x1b\[\d+A/); // cursor moved up: redrawn in place
  });

  it('elsewhere writes plain lines and throttles waiting lines', () => {
    const { stream, text } = sink();
    const display = createProgressDisplay(stream, { tty: false });
    display.onEvent({ type: 'step-start', device: 'mp1', index: 0, total: 1, description: 'restart networking' });
    for (const ms of [100, 1000, 2000, 6000])
      display.onEvent({
        type: 'waiting',
        device: 'mp1',
        description: 'restart networking',
        elapsedMs: ms,
        reason: 'connection refused',
      });
    display.onEvent({ type: 'step-done', device: 'mp1', index: 0, description: 'restart networking', elapsedMs: 6100 });
    expect(text()).toBe(
      '[mp1] 1/1 restart networking ...\n' +
        '[mp1] restarting: the device is not answering yet, as expected during a restart (0.1 s; connection refused)\n' +
        '[mp1] restarting: the device is not answering yet, as expected during a restart (6.0 s; connection refused)\n' +
        '[mp1] 1 done (6.1 s)\n',
    );
    expect(text()).not.toContain('\x1b');
  });

  it("throttles each step's waits on their own: the 802.1X wait after a long restart is shown", () => {
    const { stream, text } = sink();
    const display = createProgressDisplay(stream, { tty: false });
    display.onEvent({
      type: 'waiting',
      device: 'mp1',
      description: 'restart networking',
      elapsedMs: 6000,
      reason: 'connection refused',
    });
    display.onEvent({
      type: 'waiting',
      device: 'mp1',
      description: 'check the active view',
      elapsedMs: 0,
      reason: '802.1X on eth1: up to 20 s',
    });
    expect(text()).toBe(
      '[mp1] restarting: the device is not answering yet, as expected during a restart (6.0 s; connection refused)\n' +
        '[mp1] waiting for the device (0.0 s): 802.1X on eth1: up to 20 s\n',
    );
  });
});
