import type { AdminApi } from '../client/index.js';
import { isDeviceError } from '../core/errors.js';
import type { DeviceSnapshot, Plan } from '../plan/index.js';
import type { RollbackReport } from './apply-events.js';
import type { ProvisionOptions } from './provision-options.js';
import { restartAndWait } from './restart-and-wait.js';
import { notRestored, restoreActions, type StanzaRef } from './restore-actions.js';

/**
 * Puts back the stanzas this run changed as the snapshot showed them before the first change,
 * restarts networking and verifies. A stanza whose old version held secrets cannot be restored
 * (the device never returns them) and is reported as such.
 */
export async function rollBack(
  api: AdminApi,
  snapshot: DeviceSnapshot,
  plan: Plan,
  options: Pick<ProvisionOptions, 'restartTimeoutMs' | 'signal'>,
  onWait: (reason: string, elapsedMs: number) => void,
): Promise<RollbackReport> {
  const actions = restoreActions(snapshot.active, plan.stanzas.filter((change) => change.action !== 'unchanged'));
  try {
    for (const action of actions) {
      if (action.kind === 'delete') await api.deleteStanza(action.name, action.family).catch(() => undefined);
      else if (action.kind === 'restore') await api.postStanza({ ...action.fields, name: action.name, family: action.family });
    }
    await restartAndWait(api, options.restartTimeoutMs, onWait, options.signal, (view) => notRestored(view, actions).length === 0);
    const wrong = notRestored(await api.listInterfaces('active'), actions);
    if (wrong.length > 0) {
      return { outcome: 'failed', message: `roll-back did not take: ${wrong.join(', ')} still differ from before this run` };
    }
  } catch (error) {
    return { outcome: 'failed', message: `roll-back failed: ${error instanceof Error ? error.message : String(error)}` };
  }
  const unrestorable = actions.filter((action) => action.kind === 'unrestorable').map((action) => `${action.name} ${action.family}`);
  if (unrestorable.length > 0) {
    return { outcome: 'partial', message: `rolled back and verified, except ${unrestorable.join(', ')}, whose previous secrets the device does not return` };
  }
  return { outcome: 'restored', message: 'rolled back: the device runs its previous configuration again (verified)' };
}

/**
 * A run that fails before its networking restart has changed only the pending view: it takes
 * those changes back (re-post the active stanza, or delete a new one), so nothing of a failed run
 * becomes active at someone's next restart, and the next run does not find them as foreign.
 */
export async function takeBackPending(api: AdminApi, snapshot: DeviceSnapshot, touched: readonly StanzaRef[]): Promise<string> {
  const left: string[] = [];
  let takenBack = 0;
  for (const action of restoreActions(snapshot.active, touched)) {
    const label = `${action.name} ${action.family}`;
    try {
      if (action.kind === 'unrestorable') {
        left.push(label);
        continue;
      }
      if (action.kind === 'delete') await api.deleteStanza(action.name, action.family);
      else await api.postStanza({ ...action.fields, name: action.name, family: action.family });
      takenBack += 1;
    } catch (error) {
      // Not there at all (404): the device never took it, so there is nothing to take back.
      if (!(isDeviceError(error) && error.data.status === 404)) left.push(label);
    }
  }
  if (left.length > 0) return `left pending on the device, to be replaced by the next run: ${left.join(', ')}`;
  return takenBack > 0 ? 'the changes already posted were taken back; nothing became active' : '';
}
