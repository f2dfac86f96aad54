import { ErrorCode, isMpprovError } from '../core/errors.js';
import type { DataApi } from './data-api-client.js';
import { organizationName, type Appliance } from './data-api-model.js';

/**
 * `mpprov service check`: what agent.yaml's service settings get from the service, one check a
 * line. Each later check needs the earlier ones: the certificate before any token is sent, the
 * token before the organizations, and the organizations before the MPs.
 */

export interface ServiceCheckLine {
  check: 'tls' | 'token' | 'organizations' | 'appliances';
  ok: boolean;
  /** One sentence: what was found, or what failed and what to check. */
  text: string;
  code?: string | undefined;
}

/** Failures that happen before any HTTP answer: the connection or its certificate. */
const TRANSPORT: ReadonlySet<string> = new Set([
  ErrorCode.ServiceTls,
  ErrorCode.ServiceUnreachable,
  ErrorCode.ServiceTimeout,
]);
const TOKEN: ReadonlySet<string> = new Set([
  ErrorCode.ServiceNoCredentials,
  ErrorCode.ServiceBadCredentials,
  ErrorCode.ServiceUndecodableCredentials,
]);

export async function checkService(api: DataApi, options: { trust: string }): Promise<ServiceCheckLine[]> {
  const lines: ServiceCheckLine[] = [];
  let organizations;
  try {
    organizations = await api.listOrganizations();
  } catch (error) {
    const code = isMpprovError(error) ? error.code : ErrorCode.Internal;
    const text = error instanceof Error ? error.message : String(error);
    if (TRANSPORT.has(code)) {
      lines.push({ check: 'tls', ok: false, text, code });
      return lines;
    }
    lines.push({
      check: 'tls',
      ok: true,
      text: `connected to ${api.url} over TLS; its certificate is trusted (${options.trust})`,
    });
    lines.push({
      check: 'token',
      ok: false,
      text: TOKEN.has(code) || code === ErrorCode.ServiceForbidden ? text : `the token could not be checked: ${text}`,
      code,
    });
    return lines;
  }
  lines.push({
    check: 'tls',
    ok: true,
    text: `connected to ${api.url} over TLS; its certificate is trusted (${options.trust})`,
  });
  lines.push({ check: 'token', ok: true, text: 'the service accepts the access token (GET /v3/organization)' });
  lines.push(
    organizations.length === 0
      ? {
          check: 'organizations',
          ok: false,
          text: 'the token sees no organization: no Monitoring Point could be confirmed with it',
        }
      : {
          check: 'organizations',
          ok: true,
          text: `the token sees ${organizations.length} organization(s): ${organizations.map((o) => `${organizationName(o)} (${o.id})`).join(', ')}`,
        },
  );
  let appliances: Appliance[];
  try {
    appliances = await api.listAppliances();
  } catch (error) {
    const code = isMpprovError(error) ? error.code : ErrorCode.Internal;
    lines.push({ check: 'appliances', ok: false, text: error instanceof Error ? error.message : String(error), code });
    return lines;
  }
  lines.push({
    check: 'appliances',
    ok: true,
    text: `the token may read Monitoring Points: ${appliances.length} listed (GET /v3/appliance)`,
  });
  return lines;
}
