import type { AuthenticatorProfile } from './authenticator-profile.js';
import type { FileSlot, Stanza } from './stanza.js';

/**
 * Decides whether a switch port authorizes an interface after a networking restart. The model
 * backend (dot1x-model-backend.ts) decides from certificates and passwords in-process; a backend
 * that runs a real hostapd and wpa_supplicant can sit behind the same interface and profiles.
 */
export interface Dot1xBackend {
  authenticate(profile: AuthenticatorProfile, stanza: Stanza, files: Dot1xFiles): Promise<Dot1xResult>;
}

/** The device's active files (the content as of the restart being evaluated). */
export interface Dot1xFiles {
  get(slot: FileSlot, name: string): Uint8Array | undefined;
}

export interface Dot1xResult {
  authorized: boolean;
  /** A sentence a field engineer understands: why the port did or did not authorize. */
  reason: string;
}
