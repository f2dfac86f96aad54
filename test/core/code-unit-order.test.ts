import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { byCodeUnit } from '../../src/core/index.js';
import { normaliseFields, type OrderedRequest, vlanRuleOrder } from '../../src/plan/index.js';

describe('byCodeUnit', () => {
  it('orders by UTF-16 code unit as `<` does, not by a locale (upper case before lower, "_" after digits)', () => {
    expect(['eth1.9', 'eth_a', 'eth1.10', 'ETH2', 'eth1', 'eth1.9'].sort(byCodeUnit)).toEqual([
      'ETH2',
      'eth1',
      'eth1.10',
      'eth1.9',
      'eth1.9',
      'eth_a',
    ]);
    expect(byCodeUnit('2026-01-02T00:00:00Z', '2026-01-10T00:00:00Z')).toBe(-1);
    expect(byCodeUnit('a', 'a')).toBe(0);
  });
});

// The first localeCompare in a process loads ICU's collation data from the node binary, about
// 2.5 MiB the idle agent then keeps resident: the sorts a job runs must not call it.
describe("the job path's sorts without the locale", () => {
  // eslint-disable-next-line @typescript-eslint/unbound-method -- kept only to be put back on String.prototype, never called apart from a string
  const original = String.prototype.localeCompare;
  beforeEach(() => {
    String.prototype.localeCompare = () => {
      throw new Error('localeCompare called');
    };
  });
  afterEach(() => {
    String.prototype.localeCompare = original;
  });

  it('orders same-rank stanza requests by name', () => {
    const post = (name: string): OrderedRequest => ({ name, kind: 'post', withDot1x: false, turnsDot1xOff: false });
    expect(vlanRuleOrder([post('eth2'), post('eth1'), post('eth10')], (r) => r).map((r) => r.name)).toEqual([
      'eth1',
      'eth10',
      'eth2',
    ]);
  });

  it('compares routes as a set', () => {
    const a = normaliseFields({
      routes: [
        { destination: '192.0.2.0/24', gateway: '192.0.2.1' },
        { destination: '198.51.100.0/24', gateway: '192.0.2.1' },
      ],
    });
    const b = normaliseFields({
      routes: [
        { destination: '198.51.100.0/24', gateway: '192.0.2.1' },
        { destination: '192.0.2.0/24', gateway: '192.0.2.1' },
      ],
    });
    expect(a).toEqual(b);
  });
});
