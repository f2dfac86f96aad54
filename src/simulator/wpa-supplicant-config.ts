import { FILE_SLOTS, type FileSlot, type Stanza, type StanzaField } from './stanza.js';

/**
 * What an Admin API stanza means on the wire: the wpa_supplicant configuration a Monitoring Point
 * runs for it. This is the project's single definition of that mapping; the real 802.1X backend
 * runs exactly this text, and README "802.1X on the wire" documents the same table.
 * Pure: the caller decides where the uploaded files lie and writes the text.
 */

/** Stanza field -> wpa_supplicant network option, for the fields copied one to one. */
export const WPA_SUPPLICANT_OPTIONS = {
  ssid: 'ssid',
  passphrase: 'psk',
  wpa_key_mgmt: 'key_mgmt',
  wpa_eap: 'eap',
  wpa_identity: 'identity',
  wpa_anonymous_identity: 'anonymous_identity',
  wpa_password: 'password',
  wpa_phase1: 'phase1',
  wpa_phase2: 'phase2',
  wpa_ca_cert: 'ca_cert',
  wpa_client_cert: 'client_cert',
  wpa_private_key: 'private_key',
  wpa_private_key_passwd: 'private_key_passwd',
  wpa_ca_cert2: 'ca_cert2',
  wpa_client_cert2: 'client_cert2',
  wpa_private_key2: 'private_key2',
  wpa_private_key2_passwd: 'private_key2_passwd',
} as const satisfies Partial<Record<StanzaField, string>>;

/** Where the daemon finds the uploaded file `name` of `slot` (an absolute path). */
export type FilePathOf = (slot: FileSlot, name: string) => string;

export interface WpaSupplicantOptions {
  /** wpa_supplicant's control socket directory; left out when undefined. */
  ctrlInterface?: string | undefined;
}

/**
 * The whole wpa_supplicant.conf for one interface's active stanza, or undefined when the
 * interface runs no supplicant (a wired stanza without 802.1X).
 */
export function renderWpaSupplicantConfig(
  stanza: Stanza,
  pathOf: FilePathOf,
  options: WpaSupplicantOptions = {},
): string | undefined {
  const wireless = isWireless(stanza);
  if (!wireless && stanza.wpa_key_mgmt === undefined) return undefined;
  const global: string[] = [];
  // A global option: wpa_supplicant takes its value as it stands, without quotes.
  if (options.ctrlInterface !== undefined) global.push(`ctrl_interface=${options.ctrlInterface}`);
  // The wired driver has nothing to scan or associate with: the supplicant talks EAPOL at once.
  if (!wireless) global.push('ap_scan=0');
  return [...global, 'network={', ...networkBlock(stanza, pathOf).map((line) => `\t${line}`), '}', ''].join('\n');
}

/** The lines of the `network={...}` block, `option=value` each, without indentation. */
function networkBlock(stanza: Stanza, pathOf: FilePathOf): string[] {
  const lines: string[] = [];
  const put = (field: keyof typeof WPA_SUPPLICANT_OPTIONS, value: string) =>
    lines.push(`${WPA_SUPPLICANT_OPTIONS[field]}=${value}`);

  if (isWireless(stanza)) {
    if (stanza.ssid !== undefined) put('ssid', quote(stanza.ssid));
    switch (stanza.security) {
      case 'wpa2_personal':
        lines.push('key_mgmt=WPA-PSK', 'proto=RSN');
        // 64 hex digits are the PSK itself; anything else is the passphrase it is derived from.
        if (stanza.passphrase !== undefined)
          put('passphrase', /^[0-9A-Fa-f]{64}$/.test(stanza.passphrase) ? stanza.passphrase : quote(stanza.passphrase));
        return lines;
      case 'wpa2_enterprise':
        lines.push(`key_mgmt=${stanza.wpa_key_mgmt ?? 'WPA-EAP'}`, 'proto=RSN');
        break;
      default:
        lines.push('key_mgmt=NONE');
        return lines;
    }
  } else {
    put('wpa_key_mgmt', stanza.wpa_key_mgmt ?? 'IEEE8021X');
    // A wired port uses no dynamic WEP keys: without this the supplicant waits for EAPOL-Key frames.
    lines.push('eapol_flags=0');
  }

  if (stanza.wpa_eap !== undefined) put('wpa_eap', stanza.wpa_eap);
  for (const field of ['wpa_identity', 'wpa_anonymous_identity', 'wpa_password'] as const) {
    const value = stanza[field];
    if (value !== undefined) put(field, quote(value));
  }
  for (const field of ['wpa_phase1', 'wpa_phase2'] as const) {
    const value = stanza[field];
    if (value !== undefined) put(field, quote(value));
  }
  for (const slot of FILE_SLOTS) {
    const name = stanza[slot];
    if (name !== undefined) put(slot, quote(pathOf(slot, name)));
    const passwordField = PASSWORD_OF[slot];
    const password = passwordField === undefined ? undefined : stanza[passwordField];
    if (passwordField !== undefined && password !== undefined) put(passwordField, quote(password));
  }
  return lines;
}

const PASSWORD_OF: Partial<Record<FileSlot, 'wpa_private_key_passwd' | 'wpa_private_key2_passwd'>> = {
  wpa_private_key: 'wpa_private_key_passwd',
  wpa_private_key2: 'wpa_private_key2_passwd',
};

function isWireless(stanza: Stanza): boolean {
  return stanza.ssid !== undefined || stanza.security !== undefined;
}

/**
 * A wpa_supplicant string value: `"text"` when every character is printable ASCII, otherwise the
 * UTF-8 bytes as unquoted hex, which wpa_supplicant reads for every string option. Quoted text
 * cannot carry a newline, and its reading of non-ASCII bytes is not something to rely on.
 */
export function quote(value: string): string {
  return /^[\x20-\x7e]*$/.test(value) ? `"${value}"` : Buffer.from(value, 'utf8').toString('hex');
}
