import type { AgentServiceEvents } from '../config/index.js';
import type { DataApi, Observer, ObserverKind } from '../service/index.js';
import { createCheckAlarm, type CheckAlarm } from './check-alarm.js';
import { createEventsLog, MAX_QUEUED } from './events-log.js';
import { startEventReceiver } from './event-receiver.js';
import { createMissedEventJudge } from './missed-events.js';
import { finishPending, newObserver, rebuildObservers } from './observer-rebuild.js';
import { readObserveStatus, writeObserveStatus, type ObserveStatus } from './observe-status.js';
import { followPollConfirmations } from './poll-confirmations.js';
import { receiverSegment, registeredUrl } from './receiver-path.js';
import { lockStateDir } from './state-lock.js';
import { planRegistration, planUnregister, RegistrationAction, WANTED_KINDS } from './registration-plan.js';
import { availableNames } from './service-event.js';

/**
 * `mpprov observe`: the receiver, its registration, and the check that notices the service
 * blacklisted it and repairs that: every `check_s`, and at once (at most once per 10 s) when a
 * run on this host confirmed an MP back whose event never came (missed-events.ts). Every sentence goes out through `say` (the CLI escapes
 * and redacts it); `loud` is for a state where one of the caller's configurations is missing.
 */

export interface ObserveOptions {
  api: DataApi;
  events: AgentServiceEvents;
  stateDir: string;
  once?: boolean | undefined;
  unregister?: boolean | undefined;
  takeOver?: readonly ObserverKind[] | undefined;
  say: (sentence: string) => void;
  loud: (sentence: string) => void;
  /** Stops the receiver; the registration stays (the service keeps sending, unanswered, until blacklisting). */
  signal?: AbortSignal | undefined;
  /** Tests: the pause between POST attempts of a rebuild. */
  retryPauseMs?: number | undefined;
  /** Tests: how long after a run's confirming round its MP's event may still come. */
  missedEventGraceMs?: number | undefined;
}

/** Exit status: 0 done (or stopped), 1 refused or a failure said. */
export async function runObserve(given: ObserveOptions): Promise<number> {
  const { events, stateDir } = given;
  const ownUrl = registeredUrl(given.events.publicUrl, await receiverSegment(stateDir));
  // The segment keeps strangers' posts out: no sentence (a service's error text included) shows it.
  const hide = (text: string): string => text.replaceAll(ownUrl, `${events.publicUrl}…`);
  const options = { ...given, say: (t: string) => given.say(hide(t)), loud: (t: string) => given.loud(hide(t)) };
  if (options.once === true) return dryRun(options, ownUrl);
  const unlock = await lockStateDir(stateDir);
  try {
    return await serve(options, ownUrl);
  } finally {
    await unlock();
  }
}

async function serve(options: ObserveOptions, ownUrl: string): Promise<number> {
  const { api, events, stateDir, say } = options;
  const rebuild = { stateDir, onRetry: options.loud, pauseMs: options.retryPauseMs };
  if (await finishPending(api, rebuild)) say('posted back the configurations a stopped rebuild had left');
  if (options.unregister === true) {
    const others = planUnregister(await api.listObservers(), ownUrl);
    if (others === undefined) say(`${events.publicUrl} is not registered: nothing to remove`);
    else {
      await rebuildObservers(api, others, rebuild);
      say(`removed the configuration of ${events.publicUrl}; ${others.length} other configuration(s) posted back`);
    }
    // `mpprov status` must not go on saying "registered" for a receiver that is gone.
    const kept = await readObserveStatus(stateDir);
    if (kept !== undefined)
      await writeObserveStatus(stateDir, {
        ...kept,
        registered: false,
        blacklisted: false,
        checkedAt: new Date().toISOString(),
      });
    return 0;
  }
  const first = planRegistration(await api.listObservers(), ownUrl, options.takeOver ?? []);
  if (first.action === RegistrationAction.Refuse) {
    say(first.sentence);
    return 1;
  }
  const status: ObserveStatus = {
    publicUrl: events.publicUrl,
    registered: false,
    blacklisted: false,
    lastEventAt: null,
    checkedAt: null,
  };
  const alarm = createCheckAlarm();
  const judge = createMissedEventJudge({
    graceMs: options.missedEventGraceMs,
    onMissed: (hostname) => {
      if (alarm.ring())
        options.loud(
          `no event came for ${hostname}, which the service confirmed AVAILABLE: checking the registration now`,
        );
    },
  });
  const log = createEventsLog(stateDir);
  let dropped = 0;
  // Listening before registering: the first event may come the moment the POST is answered.
  const receiver = await startEventReceiver({
    host: events.listen.host,
    port: events.listen.port,
    tls: events.tls,
    path: new URL(ownUrl).pathname,
    onEvent: (event, asReceived) => {
      const received = new Date().toISOString();
      status.lastEventAt = received;
      judge.available(availableNames(event));
      const written = log.append({ received, event: asReceived });
      if (written === undefined) {
        dropped += 1;
        if (dropped % MAX_QUEUED === 1)
          options.loud(`events come faster than ${stateDir} takes them: ${dropped} dropped so far`);
        return;
      }
      // Once per burst, not per event: the status only names the last one.
      void written
        .then(() => (log.pending() === 0 ? writeObserveStatus(stateDir, status) : undefined))
        .catch((error: unknown) => options.loud(`an event was not written to ${stateDir}: ${String(error)}`));
    },
  });
  const stopFollowing = followPollConfirmations(stateDir, (confirmation) => judge.confirmed(confirmation));
  say(`listening on ${events.listen.text} for events posted to ${events.publicUrl}`);
  try {
    await carryOut(options, ownUrl, first, status);
    await waitChecking(options, ownUrl, status, alarm);
    return 0;
  } finally {
    stopFollowing();
    judge.close();
    alarm.close();
    await receiver.close();
  }
}

async function carryOut(
  options: ObserveOptions,
  ownUrl: string,
  plan: ReturnType<typeof planRegistration>,
  status: ObserveStatus,
): Promise<void> {
  const rebuild = { stateDir: options.stateDir, onRetry: options.loud, pauseMs: options.retryPauseMs };
  if (plan.action === RegistrationAction.Post)
    for (const observer of plan.postBack) await options.api.postObserver(newObserver(observer));
  if (plan.action === RegistrationAction.Rebuild) await rebuildObservers(options.api, plan.postBack, rebuild);
  if (plan.action !== RegistrationAction.None) options.say(plan.sentence.replace(ownUrl, options.events.publicUrl));
  status.registered = true;
  status.blacklisted = false;
  status.checkedAt = new Date().toISOString();
  await writeObserveStatus(options.stateDir, status);
}

/** Every check_s (or when rung): GET /v3/observer; blacklisted or gone is repaired the read-all/delete/post-back way. */
async function waitChecking(
  options: ObserveOptions,
  ownUrl: string,
  status: ObserveStatus,
  alarm: CheckAlarm,
): Promise<void> {
  const periodMs = options.events.checkS * 1000;
  const stopped = (): boolean => options.signal?.aborted === true;
  while (!stopped()) {
    await alarm.sleep(periodMs, options.signal);
    if (stopped()) return;
    try {
      const observers = await options.api.listObservers();
      const own = observers.find((o) => o.url === ownUrl);
      status.checkedAt = new Date().toISOString();
      status.registered = own !== undefined;
      status.blacklisted = own?.blacklisted === true;
      await writeObserveStatus(options.stateDir, status);
      const plan = planRegistration(observers, ownUrl, []);
      if (plan.action === RegistrationAction.Refuse) {
        options.loud(`not receiving events any more: ${plan.sentence}`);
        continue;
      }
      if (own?.blacklisted === true) options.loud(`the service blacklisted ${options.events.publicUrl}: repairing`);
      else if (own === undefined)
        options.loud(`${options.events.publicUrl} is no longer registered: registering again`);
      await carryOut(options, ownUrl, plan, status);
    } catch (error) {
      options.loud(`checking the registration failed: ${error instanceof Error ? error.message : String(error)}`);
    }
  }
}

function dryRun(options: ObserveOptions, ownUrl: string): Promise<number> {
  return options.api.listObservers().then((observers) => {
    for (const o of observers) options.say(`found: ${describe(o, ownUrl, options.events.publicUrl)}`);
    if (observers.length === 0) options.say('found: no configuration of this user');
    const plan = planRegistration(observers, ownUrl, options.takeOver ?? []);
    const sentence = plan.sentence.replace(ownUrl, options.events.publicUrl);
    options.say(plan.action === RegistrationAction.None ? sentence : `would: ${sentence} (dry run: nothing sent)`);
    return plan.action === RegistrationAction.Refuse ? 1 : 0;
  });
}

function describe(o: Observer, ownUrl: string, publicUrl: string): string {
  const kinds = (['testEvents', ...WANTED_KINDS, 'webAlertEvents', 'networkChangeEvents'] as const).filter(
    (k) => o[k] === true,
  );
  const url = o.url === ownUrl ? `${publicUrl} (this receiver)` : o.url;
  return `${url}  ${kinds.join(',') || 'no kinds'}${o.blacklisted === true ? '  BLACKLISTED' : ''}`;
}
