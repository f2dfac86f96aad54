import type { WriteOnlyField } from '../admin-api/index.js';
import { isDeviceError, type AdminApi } from '../client/index.js';
import type { DeviceSnapshot, Plan } from '../plan/index.js';
import type { RollbackReport, RollbackStanza } from './apply-events.js';
import type { ProvisionOptions } from './provision-options.js';
import { restartAndWait } from './restart-and-wait.js';
import { notRestored, restoreActions, restoreOrder, type RestoreAction, type StanzaRef } from './restore-actions.js';

/** What a roll-back knows about the failure it follows: which ports refused this run's 802.1X. */
export interface RollbackContext {
  dot1xRefused: readonly string[];
  /** Interfaces that are wireless (their 802.1X or passphrase faces a wireless network, not a switch port). */
  wireless: ReadonlySet<string>;
}

/** How many requests a roll-back of `plan` would send: none when every changed stanza held a secret. */
export function rollbackWrites(snapshot: DeviceSnapshot, plan: Plan): number {
  return restoreOrder(restoreActions(snapshot.active, changedStanzas(plan))).length;
}

function changedStanzas(plan: Plan): Plan['stanzas'] {
  return plan.stanzas.filter((change) => change.action !== 'unchanged');
}

/**
 * Puts back the stanzas this run changed as the snapshot showed them before the first change,
 * restarts networking and verifies. A stanza whose old version held secrets cannot be restored
 * (the device never returns them): the report says, per stanza, that it keeps the NEW settings
 * and what the technician must check.
 */
export async function rollBack(
  api: AdminApi,
  snapshot: DeviceSnapshot,
  plan: Plan,
  options: Pick<ProvisionOptions, 'restartTimeoutMs' | 'signal'>,
  onWait: (reason: string, elapsedMs: number) => void,
  context: RollbackContext,
): Promise<RollbackReport> {
  const actions = restoreActions(snapshot.active, changedStanzas(plan));
  const requests = restoreOrder(actions);
  try {
    for (const action of requests) {
      if (action.kind === 'delete') await api.deleteStanza(action.name, action.family).catch(() => undefined);
      else await api.postStanza({ ...action.fields, name: action.name, family: action.family });
    }
    // Nothing could be put back (every stanza held secrets): a restart would change nothing.
    // After one, the answer that ended its wait is the active view to check.
    const active =
      requests.length > 0
        ? await restartAndWait(
            api,
            options.restartTimeoutMs,
            onWait,
            options.signal,
            (view) => notRestored(view, actions).length === 0,
          )
        : await api.listInterfaces('active');
    const wrong = notRestored(active, actions);
    if (wrong.length > 0) {
      return {
        outcome: 'failed',
        message: `roll-back did not take: ${wrong.join(', ')} still differ from before this run`,
      };
    }
  } catch (error) {
    return {
      outcome: 'failed',
      message: `roll-back failed: ${error instanceof Error ? error.message : String(error)}`,
    };
  }
  const stanzas = actions.map((action) => stanzaReport(action, context));
  const kept = stanzas.filter((s) => s.holds === 'new');
  // "Rolled back" is said only of what a request put back: here no request was sent.
  if (requests.length === 0) {
    return { outcome: 'none', message: `nothing was written back: ${kept.map((s) => s.says).join('; ')}`, stanzas };
  }
  if (kept.length === 0) {
    return {
      outcome: 'restored',
      message: 'rolled back: the device runs its previous configuration again (verified)',
      stanzas,
    };
  }
  const back = stanzas.filter((s) => s.holds !== 'new').map((s) => s.says);
  return {
    outcome: 'partial',
    message:
      `rolled back only in part: ${kept.map((s) => s.says).join('; ')}` +
      (back.length > 0 ? `; the rest was rolled back and verified (${back.join(', ')})` : ''),
    stanzas,
  };
}

/** One stanza after a roll-back, in words: what the device holds now and what to check. */
function stanzaReport(action: RestoreAction, context: RollbackContext): RollbackStanza {
  const stanza = `${action.name} ${action.family}`;
  switch (action.kind) {
    case 'delete':
      return { stanza, holds: 'none', says: `${stanza} removed again (new in this run)` };
    case 'restore':
      return { stanza, holds: 'previous', says: `${stanza} back to its previous settings` };
    case 'unrestorable': {
      const check = whatToCheck(action.name, action.secrets, context);
      return {
        stanza,
        holds: 'new',
        check,
        says:
          `${stanza} keeps the NEW settings from this stick (the device does not return the previous ${secretWords(action.secrets)}, ` +
          `so it could not be restored): ${check}`,
      };
    }
  }
}

function whatToCheck(name: string, secrets: readonly WriteOnlyField[], context: RollbackContext): string {
  const wireless = context.wireless.has(name) || secrets.includes('passphrase');
  const network = wireless ? 'the wireless network' : 'the switch port';
  if (context.dot1xRefused.includes(name)) {
    return `${network} did not authorize them, so ${name} carries no traffic until the stick is corrected and run again (or its previous settings are entered on the device by hand)`;
  }
  return `check that ${network} accepts them`;
}

const SECRET_WORDS: Record<WriteOnlyField, string> = {
  wpa_password: '802.1X password',
  passphrase: 'wireless passphrase',
  wpa_private_key_passwd: 'private key password',
  wpa_private_key2_passwd: 'inner private key password',
};

function secretWords(secrets: readonly WriteOnlyField[]): string {
  const words = secrets.map((s) => SECRET_WORDS[s]);
  return words.length <= 1 ? (words[0] ?? 'secret') : `${words.slice(0, -1).join(', ')} and ${words.at(-1) ?? ''}`;
}

/**
 * A run that fails before its networking restart has changed only the pending view: it takes
 * those changes back (re-post the active stanza, or delete a new one), so nothing of a failed run
 * becomes active at someone's next restart, and the next run does not find them as foreign.
 */
export async function takeBackPending(
  api: AdminApi,
  snapshot: DeviceSnapshot,
  touched: readonly StanzaRef[],
): Promise<string> {
  const actions = restoreActions(snapshot.active, touched);
  const failed: string[] = [];
  let takenBack = 0;
  for (const action of restoreOrder(actions)) {
    try {
      if (action.kind === 'delete') await api.deleteStanza(action.name, action.family);
      else await api.postStanza({ ...action.fields, name: action.name, family: action.family });
      takenBack += 1;
    } catch (error) {
      // Not there at all (404): the device never took it, so there is nothing to take back.
      if (!(isDeviceError(error) && error.data.status === 404)) failed.push(`${action.name} ${action.family}`);
    }
  }
  const kept = actions.flatMap((a) =>
    a.kind === 'unrestorable'
      ? [
          `${a.name} ${a.family} keeps the NEW settings from this stick in the pending view (the device does not return the previous ${secretWords(a.secrets)}, so they could not be taken back)`,
        ]
      : [],
  );
  if (failed.length > 0) kept.push(`${failed.join(', ')} could not be taken back and stay pending`);
  if (kept.length > 0)
    return `${kept.join('; ')}: they become active at the next networking restart unless the next run replaces them`;
  return takenBack > 0 ? 'the changes already posted were taken back; nothing became active' : '';
}
