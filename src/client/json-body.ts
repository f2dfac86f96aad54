import { Secret } from '../core/secret.js';

/**
 * The JSON text of a request body. Secret values (a stanza's wpa_password, passphrase, key
 * passwords) are revealed here, at the last moment, and only into the bytes sent: Secret's own
 * toJSON would write "(secret)" to the device, which is why they are replaced first.
 */
export function jsonBody(value: unknown): string {
  return JSON.stringify(revealSecrets(value));
}

function revealSecrets(value: unknown): unknown {
  if (value instanceof Secret) return value.reveal();
  if (Array.isArray(value)) return value.map(revealSecrets);
  if (typeof value === 'object' && value !== null) {
    return Object.fromEntries(Object.entries(value).map(([key, item]) => [key, revealSecrets(item)]));
  }
  return value;
}
