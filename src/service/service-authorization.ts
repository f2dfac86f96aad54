import type { ServiceCredentials } from './service-settings.js';

/**
 * The Authorization header value: the one place the service token or password is revealed.
 * Built per request and handed straight to undici, which writes it only on a connection whose
 * certificate already verified (src/http/create-connector.ts), so nothing long-lived holds it.
 */
export function serviceAuthorization(credentials: ServiceCredentials): string {
  if (credentials.kind === 'token') return `Token ${credentials.token.reveal()}`;
  return `Basic ${Buffer.from(`${credentials.email}:${credentials.password.reveal()}`, 'utf8').toString('base64')}`;
}
