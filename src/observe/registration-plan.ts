import { OBSERVER_KINDS, type Observer, type ObserverKind } from '../service/index.js';

/**
 * What the receiver must do about the caller's observer configurations, from what GET /v3/observer
 * listed (pure: `mpprov observe --once` prints it, the real run carries it out). The service sends
 * a kind to one server per caller and DELETE removes them all, so any change to another server's
 * configuration goes through a rebuild: read all, DELETE, post every one back, this one last.
 */

export const WANTED_KINDS = ['seqEvents', 'sqaEvents'] as const satisfies readonly ObserverKind[];

export const RegistrationAction = {
  /** Registered, not blacklisted: nothing to send. */
  None: 'none',
  /** Not registered, no kind in the way: one POST. */
  Post: 'post',
  /** Blacklisted, or a kind taken over: read all, DELETE, post all back. */
  Rebuild: 'rebuild',
  /** Another server receives a kind it wants and --take-over does not name that kind. */
  Refuse: 'refuse',
} as const;
export type RegistrationAction = (typeof RegistrationAction)[keyof typeof RegistrationAction];

export interface RegistrationPlan {
  action: RegistrationAction;
  /** The sentence said for the plan (refusal or what will be done). */
  sentence: string;
  /** For Rebuild: every configuration to post back, in order, this receiver's last. */
  postBack: Observer[];
}

const NO_KINDS = Object.fromEntries(OBSERVER_KINDS.map((kind) => [kind, false])) as Record<ObserverKind, boolean>;

export function planRegistration(
  observers: readonly Observer[],
  ownUrl: string,
  takeOver: readonly ObserverKind[],
): RegistrationPlan {
  const own = observers.find((o) => o.url === ownUrl);
  const others = observers.filter((o) => o.url !== ownUrl);
  const blocking = others.flatMap((o) => WANTED_KINDS.filter((k) => o[k] === true).map((kind) => ({ o, kind })));
  const refused = blocking.find((b) => !takeOver.includes(b.kind));
  if (refused !== undefined)
    return {
      action: RegistrationAction.Refuse,
      sentence: `${refused.kind} already goes to ${refused.o.url}, another server of this user: not registering (--take-over ${refused.kind} moves it here)`,
      postBack: [],
    };
  // Every kind named, as the documented body does: a POST replaces the URL's flags, so the kinds
  // its configuration already had are kept and the rest are said false, never left to a default.
  const ownWanted: Observer = { ...NO_KINDS, ...(own ?? {}), url: ownUrl, seqEvents: true, sqaEvents: true };
  if (blocking.length > 0) {
    const taken = new Set(blocking.map((b) => b.kind));
    const moved = others.map((o) => (blocking.some((b) => b.o === o) ? withoutKinds(o, taken) : o));
    return {
      action: RegistrationAction.Rebuild,
      sentence: `taking ${[...taken].join(' and ')} over from ${[...new Set(blocking.map((b) => b.o.url))].join(', ')}: every configuration is read, deleted and posted back`,
      postBack: [...moved, ownWanted],
    };
  }
  if (own?.blacklisted === true)
    return {
      action: RegistrationAction.Rebuild,
      sentence: `${ownUrl} is blacklisted by the service: every configuration is read, deleted and posted back, this one last`,
      postBack: [...others, ownWanted],
    };
  if (own !== undefined && WANTED_KINDS.every((k) => own[k] === true))
    return {
      action: RegistrationAction.None,
      sentence: `${ownUrl} is registered for seqEvents and sqaEvents`,
      postBack: [],
    };
  return {
    action: RegistrationAction.Post,
    sentence: `registering ${ownUrl} for seqEvents and sqaEvents`,
    postBack: [ownWanted],
  };
}

/** The configurations to post back when this receiver leaves: every other one, as it was. */
export function planUnregister(observers: readonly Observer[], ownUrl: string): Observer[] | undefined {
  return observers.some((o) => o.url === ownUrl) ? observers.filter((o) => o.url !== ownUrl) : undefined;
}

function withoutKinds(observer: Observer, kinds: ReadonlySet<ObserverKind>): Observer {
  const copy: Observer = { ...observer };
  for (const kind of kinds) copy[kind] = false;
  return copy;
}
