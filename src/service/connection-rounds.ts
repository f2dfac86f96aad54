import { ErrorCode } from '../core/errors.js';
import { isAppliance, pickAppliance } from './appliance-match.js';
import { roundDue } from './round-due.js';
import {
  ConnectionOutcomeKind,
  outcome,
  outcomeOfStatus,
  statusText,
  type ConnectionOutcome,
  type OutcomeFacts,
} from './connection-outcome.js';
import type { Appliance, ConnectionStatus } from './data-api-model.js';
import { failureCode, failureKind, failureStatus, failureText } from './failure-kind.js';
import { createEventHints } from './event-hints.js';
import { planRound, type RoundGroup, type RoundQuery } from './round-plan.js';
import type { WatchState } from './watch-state.js';

/**
 * The post-check for every MP a watch waits for, in rounds (docs/service-model.md, "Fleet
 * rounds"): each round asks once per organization for all the MPs waiting in it, and answers
 * each of them; a round never starts before the previous one's answer. Each MP's wait is its own:
 * - its first look comes with the next round (at once when none ran for a round's time);
 * - its last look is sent at its deadline (a round is due then), and its answer ends the wait;
 *   an answer later than a short grace after the deadline is not waited for;
 * - AVAILABLE ends it at once, so do 401, 403 and answers no retry can change (404: a wrong
 *   service.url; 400, 406, a certificate that does not verify, a malformed answer);
 * - 5xx, network failures, timeouts and exhausted 429s are looked past until the deadline;
 * - any other status (UNAVAILABLE, NEW, BLOCKED, REMOVED, absent, a word mpprov does not know) is
 *   asked again: only AVAILABLE confirms, and an administrator may unblock or add the MP meanwhile.
 */

export interface ConnectionProgress {
  hostname: string;
  /** Requests sent so far that asked about this MP. */
  polls: number;
  elapsedMs: number;
  /** What the last answer said, when the last look got one. */
  status?: ConnectionStatus | undefined;
  /** Why the last look failed, when it did (it is asked again). */
  failure?: { code: string; message: string } | undefined;
  nextPollInMs: number;
}

export interface WaitConnectedOptions {
  /** `service.wait_connected_s`, counted from the call. */
  waitS: number;
  /** Ends this MP's wait early (SIGTERM, Ctrl-C): it then rejects with the signal's reason. */
  signal?: AbortSignal | undefined;
  onProgress?: ((progress: ConnectionProgress) => void) | undefined;
}

export interface RoundTiming {
  /** Between two rounds' starts; default 2 000 ms. */
  roundMs: number;
  /** A round due for a deadline still leaves this much after the previous one; default 250 ms. */
  minGapMs: number;
  /** How long after its deadline a wait takes the answer to its last look; default 1 000 ms. */
  lastAnswerGraceMs: number;
}

interface Waiter {
  hostname: string;
  startedAt: number;
  waitMs: number;
  deadline: number;
  polls: number;
  /** When the last request asking about it left. */
  lastSentAt: number;
  lastStatus?: ConnectionStatus | undefined;
  appliance?: Appliance | undefined;
  lastFailure?: unknown;
  onProgress?: ((progress: ConnectionProgress) => void) | undefined;
  finish(outcome: ConnectionOutcome): void;
}

export interface ConnectionRounds {
  wait(hostname: string, options: WaitConnectedOptions): Promise<ConnectionOutcome>;
  /** An event says the MP may be AVAILABLE: it is asked about soon, with other hinted MPs (event-hints.ts). */
  hint(hostname: string): void;
  /** Whether any MP is waited for now. */
  waiting(): boolean;
}

export function createConnectionRounds(state: WatchState, timing: RoundTiming): ConnectionRounds {
  const waiters = new Set<Waiter>();
  /** Requests of the running round, each with its members: aborted once none of them waits. */
  const flying = new Set<{ members: readonly Waiter[]; controller: AbortController }>();
  let timer: NodeJS.Timeout | undefined;
  let running = false;
  let lastRoundAt = -Infinity;
  /** The last round that asked for every waiting MP: the regular pace counts from it, not from a hinted one. */
  let lastRegularAt = -Infinity;
  const hints = createEventHints(timing);

  function schedule(): void {
    clearTimeout(timer);
    timer = undefined;
    if (running || waiters.size === 0) return;
    const now = Date.now();
    const regularAt = Math.min(lastRegularAt + timing.roundMs, hints.dueAt(lastRoundAt));
    const due = roundDue(regularAt, waiters, Math.max(lastRoundAt + timing.minGapMs, now));
    timer = setTimeout(() => void runRound(), due - now);
  }

  async function runRound(): Promise<void> {
    timer = undefined;
    running = true;
    lastRoundAt = Date.now();
    // Planning may ask the token's organizations: a service trickling that answer must not hold
    // the round (and every MP that starts waiting after it) once the round's MPs all left.
    const planning = { members: [...waiters], controller: new AbortController() };
    flying.add(planning);
    try {
      const hinted = hints.take([...waiters]);
      // Without hints every round is regular, as before; a deadline's last look is never left out.
      const deadlineDue = [...waiters].some((w) => w.lastSentAt < w.deadline && w.deadline <= lastRoundAt);
      const regular = hinted.length === 0 || deadlineDue || lastRoundAt >= lastRegularAt + timing.roundMs;
      if (regular) lastRegularAt = lastRoundAt;
      const members = regular ? [...waiters] : hinted;
      planning.members = members;
      const groups = await planRound(
        state,
        members.map((w) => w.hostname),
        planning.controller.signal,
      );
      flying.delete(planning);
      await Promise.all(groups.map((group) => ask(group)));
    } catch (error) {
      if (!planning.controller.signal.aborted) throw error;
    } finally {
      flying.delete(planning);
      running = false;
      schedule();
    }
  }

  async function ask(group: RoundGroup): Promise<void> {
    const wanted = new Set(group.hostnames.map((h) => h.toLowerCase()));
    const members = [...waiters].filter((w) => wanted.has(w.hostname.toLowerCase()));
    if (members.length === 0) return;
    const flight = { members, controller: new AbortController() };
    flying.add(flight);
    const onSent = () => {
      const now = Date.now();
      for (const member of members) {
        member.polls += 1;
        member.lastSentAt = now;
      }
    };
    try {
      const listed = await send(group.query, flight.controller.signal, onSent);
      for (const member of members) if (waiters.has(member)) answered(member, listed, group.query);
    } catch (error) {
      if (flight.controller.signal.aborted) return;
      if (refusedQuery(group.query, error)) {
        // Asked again at once, another way: each query is refused at most once per watch.
        const again = await planRound(
          state,
          members.filter((m) => waiters.has(m)).map((m) => m.hostname),
        );
        await Promise.all(again.map((next) => ask(next)));
        return;
      }
      for (const member of members) if (waiters.has(member)) failed(member, error);
    } finally {
      flying.delete(flight);
    }
  }

  async function send(query: RoundQuery, signal: AbortSignal, onSent: () => void): Promise<Appliance[]> {
    const options = { signal, onSent, priority: 'high' as const };
    switch (query.kind) {
      case 'id':
        try {
          return [await state.client.getAppliance(query.id, options)];
        } catch (error) {
          if (failureStatus(error) !== 404) throw error;
          return askAgainByList(query.hostname, options);
        }
      case 'org':
        return state.client.listAppliances({ orgId: query.orgId }, options);
      case 'hostname':
        return state.client.listAppliances({ hostname: query.hostname }, options);
      case 'all':
        return state.client.listAppliances({}, options);
    }
  }

  /**
   * The service does not know that id (any more): the MP is asked for by list in the same round.
   * When the list has it, the service has no usable GET /v3/appliance/{id}: not asked again.
   */
  async function askAgainByList(
    hostname: string,
    options: { signal: AbortSignal; onSent: () => void; priority: 'high' },
  ): Promise<Appliance[]> {
    state.forget(hostname);
    for (;;) {
      const orgId = state.refused.has('orgId') ? undefined : state.organizationOf(hostname);
      const query: RoundQuery =
        orgId !== undefined
          ? { kind: 'org', orgId }
          : state.refused.has('hostname')
            ? { kind: 'all' }
            : { kind: 'hostname', hostname };
      try {
        const listed = await send(query, options.signal, options.onSent);
        if (pickAppliance(listed, hostname) !== undefined) state.refused.add('id');
        return listed;
      } catch (error) {
        if (!refusedQuery(query, error)) throw error;
      }
    }
  }

  /** A service that refuses a query (400) is asked another way from the next round on, for the rest of the watch. */
  function refusedQuery(query: RoundQuery, error: unknown): boolean {
    if (failureStatus(error) !== 400 || (query.kind !== 'hostname' && query.kind !== 'org')) return false;
    state.refused.add(query.kind === 'hostname' ? 'hostname' : 'orgId');
    return true;
  }

  function answered(waiter: Waiter, listed: readonly Appliance[], query: RoundQuery): void {
    const record =
      query.kind === 'id'
        ? listed.find((entry) => isAppliance(entry, waiter.hostname))
        : pickAppliance(listed, waiter.hostname);
    if (record !== undefined) state.learn(waiter.hostname, record, query.kind === 'org' ? query.orgId : undefined);
    waiter.appliance = record;
    waiter.lastStatus = record?.connectionStatus ?? 'absent';
    waiter.lastFailure = undefined;
    if (waiter.lastStatus === 'AVAILABLE')
      waiter.finish(outcomeOfStatus({ ...facts(waiter), lastStatus: 'AVAILABLE' }));
    else if (Date.now() >= waiter.deadline) waiter.finish(finalOutcome(waiter));
    else progress(waiter);
  }

  function failed(waiter: Waiter, error: unknown): void {
    const kind = failureKind(error);
    const failure = { ...facts(waiter), errorCode: failureCode(error), reason: failureText(error) };
    if (kind === 'bad-token') waiter.finish(outcome(ConnectionOutcomeKind.BadToken, failure));
    else if (kind === 'no-permission') waiter.finish(outcome(ConnectionOutcomeKind.NoPermission, failure));
    else if (kind === 'lasting') waiter.finish(outcome(ConnectionOutcomeKind.Unreachable, failure));
    else {
      waiter.lastFailure = error;
      if (Date.now() >= waiter.deadline) waiter.finish(finalOutcome(waiter));
      else progress(waiter);
    }
  }

  function progress(waiter: Waiter): void {
    const now = Date.now();
    const next = Math.max(0, Math.min(lastRegularAt + timing.roundMs, waiter.deadline) - now);
    waiter.onProgress?.({ ...progressOf(waiter, now), nextPollInMs: next });
  }

  function leave(waiter: Waiter): void {
    waiters.delete(waiter);
    for (const flight of flying) if (flight.members.every((m) => !waiters.has(m))) flight.controller.abort();
    if (waiters.size === 0) {
      clearTimeout(timer);
      timer = undefined;
    }
  }

  return {
    waiting: () => waiters.size > 0,
    hint(hostname) {
      const waiter = [...waiters].find((w) => w.hostname.toLowerCase() === hostname.toLowerCase());
      if (waiter === undefined || !hints.add(waiter.hostname)) return;
      if (!running) schedule();
    },
    wait(hostname, options) {
      const { signal } = options;
      if (signal?.aborted === true) return Promise.reject(signal.reason as Error);
      return new Promise<ConnectionOutcome>((resolve, reject) => {
        const startedAt = Date.now();
        const waitMs = Math.max(0, options.waitS * 1000);
        const onAbort = () => {
          end();
          reject(signal?.reason as Error);
        };
        const hardEnd = setTimeout(() => waiter.finish(finalOutcome(waiter)), waitMs + timing.lastAnswerGraceMs);
        const end = () => {
          clearTimeout(hardEnd);
          signal?.removeEventListener('abort', onAbort);
          leave(waiter);
        };
        const waiter: Waiter = {
          hostname,
          startedAt,
          waitMs,
          deadline: startedAt + waitMs,
          polls: 0,
          lastSentAt: -Infinity,
          onProgress: options.onProgress,
          finish: (result) => {
            if (!waiters.has(waiter)) return;
            end();
            resolve(result);
          },
        };
        signal?.addEventListener('abort', onAbort, { once: true });
        waiters.add(waiter);
        schedule();
      });
    },
  };
}

function facts(waiter: Waiter): OutcomeFacts {
  return {
    hostname: waiter.hostname,
    waitedMs: Date.now() - waiter.startedAt,
    polls: waiter.polls,
    lastStatus: waiter.lastStatus,
    appliance: waiter.appliance,
  };
}

/** The wait ran out: what the service last said, or why it could not say. */
function finalOutcome(waiter: Waiter): ConnectionOutcome {
  const spent = { ...facts(waiter), waitedMs: waiter.waitMs };
  if (waiter.lastFailure !== undefined) {
    const said =
      spent.lastStatus === undefined
        ? ''
        : spent.lastStatus === 'absent'
          ? '; before that it listed no such MP'
          : `; it last said ${statusText(spent.lastStatus)}`;
    return outcome(ConnectionOutcomeKind.Unreachable, {
      ...spent,
      errorCode: failureCode(waiter.lastFailure),
      reason: `${failureText(waiter.lastFailure)}${said}`,
    });
  }
  if (spent.lastStatus !== undefined) return outcomeOfStatus({ ...spent, lastStatus: spent.lastStatus });
  if (spent.polls === 0) return outcome(ConnectionOutcomeKind.Unchecked, spent);
  return outcome(ConnectionOutcomeKind.Unreachable, {
    ...spent,
    errorCode: ErrorCode.ServiceTimeout,
    reason: `no answer within the wait of ${Math.round(spent.waitedMs / 1000)} s`,
  });
}

function progressOf(waiter: Waiter, now: number): Omit<ConnectionProgress, 'nextPollInMs'> {
  const failure =
    waiter.lastFailure === undefined
      ? undefined
      : { code: failureCode(waiter.lastFailure), message: failureText(waiter.lastFailure) };
  return {
    hostname: waiter.hostname,
    polls: waiter.polls,
    elapsedMs: now - waiter.startedAt,
    status: failure === undefined ? waiter.lastStatus : undefined,
    failure,
  };
}
