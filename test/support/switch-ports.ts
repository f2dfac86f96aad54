import { fileURLToPath } from 'node:url';
import { beforeAll } from 'vitest';
import { loadAuthenticatorProfile, type AuthenticatorProfile } from '../../src/simulator/index.js';

/** The switch-port profile that demands PEAP-MSCHAPv2 with the lab's identity and password. */
export const PEAP_PORT_FILE = fileURLToPath(new URL('../fixtures/switch/peap-port.yaml', import.meta.url));

/** Loads the PEAP switch port once for a test file; read `.profile` inside tests. */
export function usePeapPort(): { readonly profile: AuthenticatorProfile } {
  let profile: AuthenticatorProfile | undefined;
  beforeAll(async () => {
    profile = await loadAuthenticatorProfile(PEAP_PORT_FILE);
  });
  return {
    get profile(): AuthenticatorProfile {
      if (profile === undefined) throw new Error('usePeapPort: the profile is read in beforeAll; use it inside a test');
      return profile;
    },
  };
}
