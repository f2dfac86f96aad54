import { randomBytes } from 'node:crypto';
import { SIM_ERRORS, type OrganizationSpec, type SimError } from './service-wire.js';

/**
 * Who may call the simulated service: organizations, access tokens and users (Basic). A caller
 * sees only its organizations; one without data API access gets 403 on everything. Callers are
 * named by a label in the request log, never by their token or password.
 */

export interface SimTokenSpec {
  /** How the request log names this caller, e.g. `fleet-token`. */
  label: string;
  /** Default: a random token. */
  value?: string;
  /** Organizations it may see; default all. */
  orgIds?: readonly number[];
  /** False: authenticated, but 403 "Access is denied" on every endpoint. Default true. */
  access?: boolean;
  /** An Organization Admin's token: may list every user's observers (`allUsers=true`). Default false. */
  orgAdmin?: boolean;
}

export interface SimUserSpec {
  email: string;
  password: string;
  orgIds?: readonly number[];
  access?: boolean;
  orgAdmin?: boolean;
}

export interface Caller {
  label: string;
  orgIds: readonly number[] | 'all';
  access: boolean;
  /** The Organization Admin role (documented only for DELETE /v3/user and GET /v3/observer?allUsers=true). */
  orgAdmin: boolean;
}

interface TokenRecord extends Caller {
  value: string;
  revoked: boolean;
  /** Revoked once this many more requests with it have been answered. */
  revokeAfter?: number;
}

interface UserRecord extends Caller {
  password: string;
}

export type Authentication = { caller: Caller } | { error: SimError };

const BASE64 = /^[A-Za-z0-9+/]+={0,2}$/;

export class ServiceCallers {
  readonly organizations: OrganizationSpec[];
  readonly #tokens = new Map<string, TokenRecord>();
  readonly #users = new Map<string, UserRecord>();

  constructor(organizations: readonly OrganizationSpec[]) {
    this.organizations = organizations.map((o) => ({ ...o }));
  }

  addToken(spec: SimTokenSpec): string {
    const value = spec.value ?? randomBytes(24).toString('base64url');
    this.#tokens.set(value, {
      label: spec.label,
      value,
      orgIds: spec.orgIds ?? 'all',
      access: spec.access ?? true,
      orgAdmin: spec.orgAdmin ?? false,
      revoked: false,
    });
    return value;
  }

  addUser(spec: SimUserSpec): void {
    this.#users.set(spec.email.toLowerCase(), {
      label: spec.email,
      password: spec.password,
      orgIds: spec.orgIds ?? 'all',
      access: spec.access ?? true,
      orgAdmin: spec.orgAdmin ?? false,
    });
  }

  /** Revokes a token by its label (or value) now, or after `afterRequests` more requests with it. */
  revokeToken(labelOrValue: string, afterRequests?: number): void {
    const record = [...this.#tokens.values()].find((t) => t.label === labelOrValue || t.value === labelOrValue);
    if (record === undefined) throw new Error(`the simulated service has no token labelled "${labelOrValue}"`);
    if (afterRequests === undefined || afterRequests <= 0) record.revoked = true;
    else record.revokeAfter = afterRequests;
  }

  /** The Authorization header's caller, or the documented 401 that says why not. */
  authenticate(header: string | undefined): Authentication {
    if (header === undefined || header.trim() === '') return { error: SIM_ERRORS.noCredentials };
    const [scheme = '', ...rest] = header.trim().split(/\s+/);
    const credentials = rest.join(' ');
    switch (scheme.toLowerCase()) {
      case 'token': {
        const token = this.#tokens.get(credentials);
        if (token === undefined || token.revoked) return { error: SIM_ERRORS.badCredentials };
        this.#countTowardsRevocation(token);
        return { caller: token };
      }
      case 'basic': {
        const decoded = decodeBasic(credentials);
        if (decoded === undefined) return { error: SIM_ERRORS.undecodable };
        const user = this.#users.get(decoded.email.toLowerCase());
        if (user === undefined || user.password !== decoded.password) return { error: SIM_ERRORS.badCredentials };
        return { caller: user };
      }
      default:
        // An unknown scheme is no credentials this service understands.
        return { error: SIM_ERRORS.noCredentials };
    }
  }

  /** The caller's label for rate limiting without authenticating (a revoked token still counts). */
  labelOf(header: string | undefined): string | undefined {
    const [scheme = '', ...rest] = (header ?? '').trim().split(/\s+/);
    if (scheme.toLowerCase() === 'token') return this.#tokens.get(rest.join(' '))?.label;
    if (scheme.toLowerCase() === 'basic') {
      const decoded = decodeBasic(rest.join(' '));
      return decoded === undefined ? undefined : this.#users.get(decoded.email.toLowerCase())?.label;
    }
    return undefined;
  }

  visibleOrganizations(caller: Caller): OrganizationSpec[] {
    return this.organizations.filter((o) => sees(caller, o.id));
  }

  /** True when the organization exists and the caller may see it (one answer for both: 403 reveals nothing). */
  mayUseOrganization(caller: Caller, orgId: number): boolean {
    return sees(caller, orgId) && this.organizations.some((o) => o.id === orgId);
  }

  exists(orgId: number): boolean {
    return this.organizations.some((o) => o.id === orgId);
  }

  #countTowardsRevocation(token: TokenRecord): void {
    if (token.revokeAfter === undefined) return;
    token.revokeAfter -= 1;
    if (token.revokeAfter <= 0) {
      token.revoked = true;
      delete token.revokeAfter;
    }
  }
}

export function sees(caller: Pick<Caller, 'orgIds'>, orgId: number): boolean {
  return caller.orgIds === 'all' || caller.orgIds.includes(orgId);
}

function decodeBasic(encoded: string): { email: string; password: string } | undefined {
  if (!BASE64.test(encoded) || encoded.length % 4 !== 0) return undefined;
  const text = Buffer.from(encoded, 'base64').toString('utf8');
  const colon = text.indexOf(':');
  if (colon < 0) return undefined;
  return { email: text.slice(0, colon), password: text.slice(colon + 1) };
}
