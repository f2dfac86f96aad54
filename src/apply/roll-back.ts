import type { AdminApi } from '../client/index.js';
import { isDeviceError } from '../core/errors.js';
import { configFields, type DeviceInterfaceView, type DeviceSnapshot, indexStanzas, normaliseFields, type Plan, SECRET_FIELDS, stanzaKey } from '../plan/index.js';
import type { RollbackReport } from './apply-events.js';
import type { ProvisionOptions } from './provision-device.js';
import { restartAndWait } from './run-step.js';

/**
 * Puts back the stanzas this run changed as the snapshot showed them before the first change,
 * restarts networking and verifies. A stanza whose old version held secrets cannot be restored
 * (the device never returns them) and is reported as such.
 */
export async function rollBack(
  api: AdminApi,
  snapshot: DeviceSnapshot,
  plan: Plan,
  options: ProvisionOptions,
  onWait: (reason: string, elapsedMs: number) => void,
): Promise<RollbackReport> {
  const before = indexStanzas(snapshot.active);
  const unrestorable: string[] = [];
  const restored: { key: string; fields: Record<string, unknown> | null }[] = [];
  try {
    for (const change of plan.stanzas) {
      if (change.action === 'unchanged') continue;
      const key = stanzaKey(change.name, change.family);
      const old = before.get(key)?.stanza;
      if (old == null) {
        await api.deleteStanza(change.name, change.family).catch(() => undefined);
        restored.push({ key, fields: null });
      } else if (SECRET_FIELDS.some((f) => old[`${f}_set`] === true)) {
        unrestorable.push(`${change.name} ${change.family}`);
      } else {
        const fields = configFields(old);
        await api.postStanza({ ...fields, name: change.name, family: change.family } as Parameters<AdminApi['postStanza']>[0]);
        restored.push({ key, fields });
      }
    }
    const differing = (view: DeviceInterfaceView[]): string[] => {
      const active = indexStanzas(view);
      return restored
        .filter(({ key, fields }) => {
          const now = active.get(key)?.stanza;
          if (fields === null) return now != null;
          return now == null || comparable(configFields(now)) !== comparable(fields);
        })
        .map((r) => r.key);
    };
    await restartAndWait(api, options.restartTimeoutMs, onWait, options.signal, (view) => differing(view).length === 0);
    const wrong = differing((await api.listInterfaces('active')) as DeviceInterfaceView[]);
    if (wrong.length > 0) {
      return { outcome: 'failed', message: `roll-back did not take: ${wrong.join(', ')} still differ from before this run` };
    }
  } catch (error) {
    return { outcome: 'failed', message: `roll-back failed: ${error instanceof Error ? error.message : String(error)}` };
  }
  if (unrestorable.length > 0) {
    return { outcome: 'partial', message: `rolled back and verified, except ${unrestorable.join(', ')}, whose previous secrets the device does not return` };
  }
  return { outcome: 'restored', message: 'rolled back: the device runs its previous configuration again (verified)' };
}

function comparable(fields: Record<string, unknown>): string {
  const normal = normaliseFields(fields);
  return JSON.stringify(Object.keys(normal).sort().map((k) => [k, normal[k]]));
}

/**
 * A run that fails before its networking restart has changed only the pending view: it takes
 * those changes back (re-post the active stanza, or delete a new one), so nothing of a failed run
 * becomes active at someone's next restart, and the next run does not find them as foreign.
 */
export async function takeBackPending(api: AdminApi, snapshot: DeviceSnapshot, touched: readonly { name: string; family: 'inet' | 'inet6' }[]): Promise<string> {
  const before = indexStanzas(snapshot.active);
  const left: string[] = [];
  let takenBack = 0;
  for (const { name, family } of touched) {
    const old = before.get(stanzaKey(name, family))?.stanza;
    try {
      if (old == null) {
        await api.deleteStanza(name, family);
        takenBack += 1;
      } else if (SECRET_FIELDS.some((f) => old[`${f}_set`] === true)) {
        left.push(`${name} ${family}`);
      } else {
        await api.postStanza({ ...configFields(old), name, family } as Parameters<AdminApi['postStanza']>[0]);
        takenBack += 1;
      }
    } catch (error) {
      // Not there at all (404): the device never took it, so there is nothing to take back.
      if (!(isDeviceError(error) && error.data.status === 404)) left.push(`${name} ${family}`);
    }
  }
  if (left.length > 0) return `left pending on the device, to be replaced by the next run: ${left.join(', ')}`;
  return takenBack > 0 ? 'the changes already posted were taken back; nothing became active' : '';
}
