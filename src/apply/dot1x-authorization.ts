import type { DeviceInterface, Family, Stanza } from '../admin-api/index.js';
import type { AdminApi } from '../client/index.js';
import { ErrorCode, MpprovError } from '../core/errors.js';
import type { Dot1xFacts, ExpectedStanza } from '../plan/index.js';
import { rankSuspects } from './dot1x-suspects.js';

/**
 * Whether switch ports authorized the 802.1X a run applied, judged as the model says a client
 * must (docs/device-model.md): the Admin API has no authorization state, but a refused port carries
 * no traffic, so a dhcp (or inet6 auto/dhcp) stanza there never gets an address. An interface is
 * authorized when one of its 802.1X dhcp/auto stanzas shows `in_use` within the grace period. A
 * static (or manual) stanza keeps its address either way: its authorization is not visible.
 * Fields a device adds beyond the model (an authorization state of a simulator) are never read.
 */

/** An interface whose 802.1X this run applied and whose port can be seen to authorize it. */
export interface Dot1xWatch {
  name: string;
  /** Its 802.1X stanzas that get their address from the network: an address there proves the port. */
  families: Family[];
  facts: Dot1xFacts | undefined;
}

export interface Dot1xWatchList {
  watches: Dot1xWatch[];
  /** Stanzas with 802.1X whose interface has only static or manual stanzas ("eth1 inet"). */
  notVisible: string[];
}

/** Which expected stanzas can show authorization, and which cannot. Pure. */
export function dot1xWatches(expected: readonly ExpectedStanza[]): Dot1xWatchList {
  const byName = new Map<string, ExpectedStanza[]>();
  for (const want of expected) {
    if (want.stanza === null || typeof want.stanza.fields.wpa_key_mgmt !== 'string') continue;
    byName.set(want.name, [...(byName.get(want.name) ?? []), want]);
  }
  const watches: Dot1xWatch[] = [];
  const notVisible: string[] = [];
  for (const [name, stanzas] of byName) {
    const families = stanzas.filter((s) => addressFromNetwork(s.stanza?.fields.method, s.family)).map((s) => s.family);
    if (families.length === 0) notVisible.push(...stanzas.map((s) => `${name} ${s.family}`));
    else watches.push({ name, families, facts: stanzas[0]?.stanza?.dot1x });
  }
  return { watches, notVisible };
}

function addressFromNetwork(method: unknown, family: Family): boolean {
  return method === 'dhcp' || (family === 'inet6' && method === 'auto');
}

/** Whether the view shows an address on one of the watch's stanzas. */
export function isAuthorized(view: readonly DeviceInterface[], watch: Dot1xWatch): boolean {
  const iface = view.find((i) => i.name === watch.name);
  return watch.families.some((family) => holdsAddress(iface?.families[family]));
}

function holdsAddress(stanza: Stanza | null | undefined): boolean {
  const address = stanza?.in_use?.address;
  return typeof address === 'string' && address !== '';
}

const POLL_MS = 300;

/**
 * Polls the active view (one GET at a time, every 300 ms) until every watched interface holds an
 * address or `graceMs` has passed since `started` (the restart's end). DHCP takes seconds, so
 * a first view without an address is no verdict. Returns the interfaces that never got one.
 */
export async function awaitAuthorization(
  api: AdminApi,
  first: readonly DeviceInterface[],
  watches: readonly Dot1xWatch[],
  graceMs: number,
  started: number,
  signal?: AbortSignal,
): Promise<Dot1xWatch[]> {
  let view = first;
  for (;;) {
    const waiting = watches.filter((w) => !isAuthorized(view, w));
    if (waiting.length === 0 || Date.now() - started >= graceMs) return waiting;
    // The agent must stop within seconds; a grace period may be longer than that.
    if (signal?.aborted === true) throw new Dot1xWaitAbortedError(waiting.map((w) => w.name));
    await new Promise((resolve) =>
      setTimeout(resolve, Math.min(POLL_MS, Math.max(1, graceMs - (Date.now() - started)))),
    );
    view = await api.listInterfaces('active');
  }
}

/**
 * Ports that did not authorize the 802.1X this run applied: a wrong result, rolled back like any
 * other. The message names each interface, says what was seen, and lists the likely causes.
 */
export class Dot1xNotAuthorizedError extends MpprovError {
  constructor(
    readonly refused: readonly Dot1xWatch[],
    readonly graceMs: number,
    now: Date = new Date(),
  ) {
    super(ErrorCode.VerificationFailed, refused.map((watch) => refusalSentence(watch, graceMs, now)).join('. '));
    this.name = 'Dot1xNotAuthorizedError';
  }
}

/** The agent is shutting down while a port may still be authorizing: we stop watching, and say so. */
export class Dot1xWaitAbortedError extends MpprovError {
  constructor(readonly interfaces: readonly string[]) {
    super(
      ErrorCode.ApplyFailed,
      `stopped waiting for the 802.1X of ${interfaces.join(', ')} to be authorized because the agent is shutting down; ` +
        'the new settings are active: check that the interface got an address when the agent runs again',
    );
    this.name = 'Dot1xWaitAbortedError';
  }
}

function refusalSentence(watch: Dot1xWatch, graceMs: number, now: Date): string {
  const who = watch.facts?.wireless === true ? 'the wireless network' : 'the switch port';
  const stanzas = watch.families.map((f) => `${watch.name} ${f}`).join(' and ');
  const seen =
    `${who} did not authorize the 802.1X of ${watch.name}: ${stanzas} got no address within ${Math.round(graceMs / 100) / 10} s after the restart ` +
    '(an interface whose 802.1X is refused carries no traffic)';
  if (watch.facts === undefined) return seen;
  const causes = rankSuspects(watch.facts, now).map((s, i) => `(${i + 1}) ${s.text}`);
  causes.push(
    `(${causes.length + 1}) or it was authorized but nothing on that network hands out addresses (no DHCP server or router advertisement)`,
  );
  return `${seen}. Likely causes, most likely first: ${causes.join('; ')}`;
}
