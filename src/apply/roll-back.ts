import type { AdminApi } from '../client/index.js';
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
