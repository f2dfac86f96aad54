import type { Secret } from '../core/secret.js';

/**
 * The Authorization header value: the one place the device password is revealed. Built per
 * request and handed straight to undici, so no long-lived string holds it.
 */
export function basicAuthorization(username: string, password: Secret): string {
  return `Basic ${Buffer.from(`${username}:${password.reveal()}`, 'utf8').toString('base64')}`;
}
