import type { Interface, Secret } from '../config/index.js';
import { EapMethodName } from './preflight-report.js';

type Dot1x = NonNullable<Interface['dot1x']>;

/** The stick's certificate and key files, as written into the private folder (absolute paths). */
export interface SupplicantFiles {
  caCert?: string;
  clientCert?: string;
  privateKey?: string;
  caCert2?: string;
  clientCert2?: string;
  privateKey2?: string;
}

/** The stick's file keys of a dot1x block (and its inner_tls) -> where the supplicant finds them. */
export const FILE_SLOTS = [
  { key: ['ca_cert'], slot: 'caCert' },
  { key: ['client_cert'], slot: 'clientCert' },
  { key: ['private_key'], slot: 'privateKey' },
  { key: ['inner_tls', 'ca_cert'], slot: 'caCert2' },
  { key: ['inner_tls', 'client_cert'], slot: 'clientCert2' },
  { key: ['inner_tls', 'private_key'], slot: 'privateKey2' },
] as const satisfies readonly { key: readonly string[]; slot: keyof SupplicantFiles }[];

/** wpa_supplicant 2.10's line buffer: a configuration line of this many bytes or more is split. */
export const SUPPLICANT_LINE_BYTES = 2_000;

export function eapMethodOf(dot1x: Dot1x): EapMethodName {
  switch (dot1x.eap) {
    case 'tls':
      return EapMethodName.EapTls;
    case 'md5':
      return EapMethodName.EapMd5;
    default:
      return dot1x.inner === 'tls' ? EapMethodName.PeapTls : EapMethodName.PeapMschapv2;
  }
}

/**
 * wpa_supplicant.conf for the laptop's wired port with the stick's 802.1X settings: the same
 * options the Monitoring Point's own supplicant gets (README "802.1X on the wire"), so the switch
 * sees what it will see from the MP. Pure; the caller writes it 0600 into its private folder.
 */
export function renderSupplicantConfig(dot1x: Dot1x, files: SupplicantFiles): string {
  const lines: string[] = ['key_mgmt=IEEE8021X', 'eapol_flags=0'];
  const put = (option: string, value: string | undefined) => {
    if (value !== undefined) lines.push(`${option}=${quote(value)}`);
  };
  const putSecret = (option: string, secret: Secret | undefined) => {
    if (secret !== undefined) lines.push(secret.intoSupplicantConfig((value) => `${option}=${quote(value)}`));
  };
  lines.push(`eap=${dot1x.eap.toUpperCase()}`);
  put('identity', dot1x.identity);
  put('anonymous_identity', dot1x.anonymous_identity);
  putSecret('password', dot1x.password);
  put('ca_cert', files.caCert);
  if (dot1x.eap === 'peap') {
    put('phase1', `peapver=${dot1x.peap_version ?? 0}`);
    put('phase2', dot1x.inner === 'tls' ? 'auth=TLS' : 'auth=MSCHAPV2');
  }
  put('client_cert', files.clientCert);
  put('private_key', files.privateKey);
  putSecret('private_key_passwd', dot1x.private_key_password);
  put('ca_cert2', files.caCert2);
  put('client_cert2', files.clientCert2);
  put('private_key2', files.privateKey2);
  putSecret('private_key2_passwd', dot1x.inner_tls?.private_key_password);
  // ap_scan=0: the wired driver has nothing to scan; the supplicant talks EAPOL at once.
  return ['ap_scan=0', 'network={', ...lines.map((line) => `\t${line}`), '}', ''].join('\n');
}

/**
 * A wpa_supplicant string value: `"text"` for printable ASCII without `"` and `#`, otherwise the
 * UTF-8 bytes as unquoted hex, which wpa_supplicant reads for every string option. Quoted text
 * cannot carry a line break, so nothing from the stick can add an option of its own; and `#`
 * after a second `"` starts a comment there (`"pa"#ss"` is read as `pa`), so either one goes as
 * hex rather than letting the supplicant read another value than the stick's.
 */
function quote(value: string): string {
  return /^[\x20-\x21\x24-\x7e]*$/.test(value) ? `"${value}"` : Buffer.from(value, 'utf8').toString('hex');
}

/**
 * wpa_supplicant (2.10) reads its configuration in lines of at most 1 999 bytes and takes the rest
 * of a longer line as the next one: its options (names only, never the value) whose line is too
 * long, which the caller refuses before the supplicant starts. Pure.
 */
export function overlongOptions(config: string): string[] {
  return config
    .split('\n')
    .filter((line) => Buffer.byteLength(line, 'utf8') >= SUPPLICANT_LINE_BYTES)
    .map((line) => line.trim().split('=')[0] ?? '');
}
