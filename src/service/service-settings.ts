import type { Secret } from '../core/secret.js';

/**
 * What agent.yaml's `service` block becomes once the config stage has read it (token file or
 * credential read, its one trailing newline dropped, the CA file read). The service stage never
 * reads files itself.
 */
export interface ServiceSettings {
  /** The data API base including `/api`, e.g. `https://service.example/api`. */
  url: string;
  token: Secret;
  /** `service.tls.ca`: trusted in addition to the system store. */
  caPem?: string | undefined;
  /** `service.wait_connected_s`: how long the post-check waits, counted from the start of the wait. */
  waitConnectedS: number;
}

/** How the client proves who it is: a token (recommended), or a user's e-mail and password. */
export type ServiceCredentials = { kind: 'token'; token: Secret } | { kind: 'basic'; email: string; password: Secret };

/** Everything the client needs to reach the service. */
export interface ServiceTarget {
  url: string;
  credentials: ServiceCredentials;
  caPem?: string | undefined;
}

export function serviceTarget(settings: ServiceSettings): ServiceTarget {
  return { url: settings.url, credentials: { kind: 'token', token: settings.token }, caPem: settings.caPem };
}
