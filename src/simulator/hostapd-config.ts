import type { AuthenticatorProfile, EapMethod, UserMethod } from './authenticator-profile.js';
import { SimulatorError, SimulatorErrorCode } from './simulator-error.js';

/**
 * A switch port's authenticator profile as hostapd with its internal EAP server runs it: the wired
 * driver, IEEE 802.1X, and an eap_user file built from the profile's users. Pure text; the real
 * backend writes it next to the profile's PEM files. Settings are the ones the real backend's
 * tests prove against hostapd and wpa_supplicant (docs/simulator.md, "The real backend").
 */

export interface HostapdPaths {
  /** The authenticator's end of the veth. */
  interface: string;
  ctrlInterface: string;
  eapUserFile: string;
  /** Where the profile's PEM files were written; each only when the profile has it. */
  clientCa?: string | undefined;
  serverCert?: string | undefined;
  serverKey?: string | undefined;
}

export function renderHostapdConfig(profile: AuthenticatorProfile, paths: HostapdPaths): string {
  const lines = [
    `interface=${paths.interface}`,
    'driver=wired',
    `ctrl_interface=${paths.ctrlInterface}`,
    'logger_stdout=-1',
    'logger_stdout_level=1',
    'ieee8021x=1',
    'eapol_version=2',
    'use_pae_group_addr=1',
    // One authentication per daemon: no re-authentication while it runs.
    'eap_reauth_period=0',
    'eap_server=1',
    `eap_user_file=${paths.eapUserFile}`,
  ];
  if (paths.clientCa !== undefined) lines.push(`ca_cert=${paths.clientCa}`);
  if (paths.serverCert !== undefined) lines.push(`server_cert=${paths.serverCert}`);
  if (paths.serverKey !== undefined) lines.push(`private_key=${paths.serverKey}`);
  if (profile.serverId !== undefined) lines.push(`server_id=${profile.serverId}`);
  return `${lines.join('\n')}\n`;
}

const OUTER: Record<UserMethod, EapMethod> = { 'peap-mschapv2': 'peap', 'peap-tls': 'peap', tls: 'tls', md5: 'md5' };

/** A profile holding something hostapd's eap_user format cannot carry: ProfileNotRenderable, naming it. */
const cannotCarry = (what: string) =>
  new SimulatorError(SimulatorErrorCode.ProfileNotRenderable, `${what} cannot be written to hostapd's eap_user file`);

/**
 * hostapd's eap_user file for the profile's users. hostapd takes the FIRST line whose identity
 * matches, and the outer (phase 1) line decides which EAP method the server proposes; a peer
 * that wants another one answers NAK and the server moves on along that line's list. So:
 * - one phase-1 line per identity, listing every outer method its entries allow (entries with the
 *   same identity add up; for each method the first entry listing it gives the password), plus
 *   PEAP when the port offers it: PEAP's outer identity is free, only the inner one counts;
 * - `* PEAP` last, for outer (anonymous) identities nobody is called;
 * - one phase-2 `[2]` line per identity with its inner PEAP methods.
 * Methods whose EAP type the port does not offer are left out, as the server would not run them.
 */
export function renderEapUserFile(profile: AuthenticatorProfile): string {
  const offered = (m: UserMethod) => profile.eapMethods.includes(OUTER[m]);
  const peap = profile.eapMethods.includes('peap');
  const identities = [...new Set(profile.users.map((u) => u.identity))];
  const phase1: string[] = [];
  const phase2: string[] = [];
  for (const identity of identities) {
    const entries = profile.users.filter((u) => u.identity === identity);
    const allows = (m: UserMethod) => offered(m) && entries.some((u) => u.methods.includes(m));
    const passwordFor = (m: UserMethod) => entries.find((u) => u.methods.includes(m))?.password;
    const id = eapUserIdentity(identity);

    const outer = [...(allows('tls') ? ['TLS'] : []), ...(allows('md5') ? ['MD5'] : []), ...(peap ? ['PEAP'] : [])];
    const md5Password = allows('md5') ? passwordFor('md5') : undefined;
    if (outer.length > 0)
      phase1.push(
        [id, outer.join(','), ...(md5Password !== undefined ? [eapUserPassword(md5Password)] : [])].join('\t'),
      );

    const inner = [...(allows('peap-mschapv2') ? ['MSCHAPV2'] : []), ...(allows('peap-tls') ? ['TLS'] : [])];
    const innerPassword = allows('peap-mschapv2') ? passwordFor('peap-mschapv2') : undefined;
    if (inner.length > 0) {
      phase2.push(
        [id, inner.join(','), ...(innerPassword !== undefined ? [eapUserPassword(innerPassword)] : []), '[2]'].join(
          '\t',
        ),
      );
    }
  }
  // hostapd reads lines of at most 511 bytes; a longer one would be cut and silently mismatch.
  const tooLong = [...phase1, ...phase2].find((line) => Buffer.byteLength(line) > 500);
  if (tooLong !== undefined)
    throw cannotCarry(
      `identity ${tooLong.split('\t')[0] ?? ''} with its methods and password (longer than the 500 bytes hostapd reads per line)`,
    );
  const lines = [
    '# phase 1 (outer identity): the first matching line wins',
    ...phase1,
    ...(peap ? ['*\tPEAP'] : []),
    '# phase 2 (inside the PEAP tunnel)',
    ...phase2,
  ];
  return `${lines.join('\n')}\n`;
}

/** hostapd reads an identity only between double quotes, as raw bytes up to the next quote. */
function eapUserIdentity(identity: string): string {
  if (/["\r\n\0]/.test(identity)) {
    throw cannotCarry(`identity ${JSON.stringify(identity)} (it holds a double quote or a line break)`);
  }
  return `"${identity}"`;
}

/** Quoted when plain printable ASCII without a quote, otherwise hex (hostapd reads both). */
function eapUserPassword(password: string): string {
  return /^[\x20-\x21\x23-\x7e]*$/.test(password) ? `"${password}"` : Buffer.from(password, 'utf8').toString('hex');
}
