import type { DeviceIdentity } from '../client/index.js';
import type { Secret } from '../core/secret.js';
import type { SecretsRecord } from './secrets-record.js';

/**
 * When a write-only secret (802.1X password, WPA passphrase, key password) is sent to a stanza
 * that the device reports as already holding one. The device never returns the value, so the
 * choice is a policy, as `update_password` is for network modules:
 * - `on_change`: sent unless the secrets record holds its hash (no record: sent, once).
 * - `on_create`: sent when the record says it changed; with no record entry it counts as the
 *   device's own, so a controller with a fresh state folder (an AWX job) changes nothing.
 * - `always`: sent every run (and remembered), so a run reports changed.
 * A stanza that is created, or whose other fields change, is posted whole with its secrets under
 * every policy (the plan's choice, not this one's).
 */
export const UpdateSecrets = {
  OnChange: 'on_change',
  OnCreate: 'on_create',
  Always: 'always',
} as const;
export type UpdateSecrets = (typeof UpdateSecrets)[keyof typeof UpdateSecrets];

export const UPDATE_SECRETS_CHOICES: readonly UpdateSecrets[] = Object.values(UpdateSecrets);

/** The plan's `secretKnown` for one device under a policy. */
export function secretKnownBy(
  policy: UpdateSecrets,
  record: SecretsRecord,
  device: DeviceIdentity,
): (stanzaKey: string, field: string, value: Secret) => boolean {
  switch (policy) {
    case UpdateSecrets.Always:
      return () => false;
    case UpdateSecrets.OnCreate:
      return (stanzaKey, field, value) =>
        !record.recorded(device, stanzaKey, field) || record.known(device, stanzaKey, field, value);
    default:
      return (stanzaKey, field, value) => record.known(device, stanzaKey, field, value);
  }
}
