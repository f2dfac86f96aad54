import { byCodeUnit } from '../core/index.js';
/** One stanza request as the VLAN rule sees it. */
export interface OrderedRequest {
  name: string;
  kind: 'post' | 'delete';
  /** A post whose stanza has 802.1X. */
  withDot1x: boolean;
  /** A post that takes 802.1X away from a VLAN stanza that has it now. */
  turnsDot1xOff: boolean;
}

/**
 * The order of stanza requests under the device's VLAN rule (a VLAN stanza with 802.1X only on a
 * parent on dhcp or static with 802.1X, enforced on every POST and DELETE, both ways):
 *   1. VLAN deletes, and VLAN posts that turn the VLAN's 802.1X off: before the parent can lose it;
 *   2. parent (non-VLAN) posts: a parent gains 802.1X before anything needs it;
 *   3. parent deletes: after the other family of the parent was posted, which may be the one
 *      that keeps 802.1X;
 *   4. the other VLAN posts: after their parent is ready (the vendor's order, parent first).
 * Stable within each group, names sorted, so the plan reads the same every time. Pure; the plan
 * and the roll-back use it alike.
 */
export function vlanRuleOrder<T>(items: readonly T[], describe: (item: T) => OrderedRequest): T[] {
  const rank = (r: OrderedRequest): number => {
    const vlan = r.name.includes('.');
    if (vlan && (r.kind === 'delete' || r.turnsDot1xOff)) return 1;
    if (!vlan) return r.kind === 'post' ? 2 : 3;
    return 4;
  };
  return items
    .map((item, index) => ({ item, index, request: describe(item) }))
    .sort(
      (a, b) => rank(a.request) - rank(b.request) || byCodeUnit(a.request.name, b.request.name) || a.index - b.index,
    )
    .map(({ item }) => item);
}
