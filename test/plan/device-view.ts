import { type ConfigState, type DeviceInterface, normaliseInterfaces } from '../../src/admin-api/index.js';

/**
 * A device view written as GET /interface/ shows it (families shape), read through the same
 * admin-api normalisation the client uses: tests cannot build a view the client would not return.
 */
export function deviceView(
  entries: readonly Record<string, unknown>[],
  state: ConfigState = 'active',
): DeviceInterface[] {
  return normaliseInterfaces(entries, state);
}
