import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { createIdleCollector } from '../../src/agent/idle-collect.js';

// The collector's timing, on vitest's fake clock (no real waiting): when it collects, and when not.
describe('the idle collector', () => {
  beforeEach(() => vi.useFakeTimers());
  afterEach(() => vi.useRealTimers());

  const make = () => {
    const collections: number[] = [];
    const collected: Array<[number, number]> = [];
    const collector = createIdleCollector({
      gc: () => collections.push(Date.now()),
      onCollected: (before, after) => collected.push([before, after]),
      minIntervalMs: 5_000,
      now: () => Date.now(),
    });
    return { collector, collections, collected };
  };

  it('collects as soon as the agent is idle, after the callbacks under way, and reports the heap', () => {
    const { collector, collections, collected } = make();
    collector.idle();
    expect(collections).toHaveLength(0);
    vi.advanceTimersByTime(0);
    expect(collections).toHaveLength(1);
    expect(collected).toHaveLength(1);
    expect(collected[0]?.[0]).toBeGreaterThan(0);
  });

  it('collects at most once per interval: an idle moment soon after waits for the interval to pass', () => {
    const { collector, collections } = make();
    collector.idle();
    vi.advanceTimersByTime(0);
    vi.advanceTimersByTime(1_000);
    collector.idle();
    vi.advanceTimersByTime(3_999);
    expect(collections).toHaveLength(1);
    vi.advanceTimersByTime(1);
    expect(collections).toHaveLength(2);
  });

  it('a job starting before a waiting collection cancels it; the next idle moment past the interval collects at once', () => {
    const { collector, collections } = make();
    collector.idle();
    vi.advanceTimersByTime(0);
    vi.advanceTimersByTime(1_000);
    collector.idle();
    collector.busy();
    vi.advanceTimersByTime(10_000);
    expect(collections).toHaveLength(1);
    collector.idle();
    vi.advanceTimersByTime(0);
    expect(collections).toHaveLength(2);
  });

  it('does nothing without an exposed gc, and nothing after close', () => {
    const none = createIdleCollector({ gc: undefined, now: () => Date.now() });
    none.idle();
    vi.advanceTimersByTime(10_000);
    const { collector, collections } = make();
    collector.idle();
    collector.close();
    vi.advanceTimersByTime(10_000);
    collector.idle();
    vi.advanceTimersByTime(10_000);
    expect(collections).toHaveLength(0);
  });
});
