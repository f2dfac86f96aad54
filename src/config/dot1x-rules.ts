import type { Dot1x } from './schema.js';
import { type KeyPath, Severity, type UnplacedProblem } from '../core/problem.js';
import { given, wasRefused } from './salvage-by-schema.js';

/**
 * Which 802.1X keys fit which EAP type. These are the device's own rules (docs/device-model.md),
 * checked here so the Monitoring Point never receives a stanza it would refuse with a 400.
 */

type Dot1xKey = keyof Dot1x;

interface EapProfile {
  label: string;
  required: readonly Dot1xKey[];
  /** Keys that do not fit this EAP type: the device refuses them. */
  refused: readonly Dot1xKey[];
}

const CERT_KEYS: readonly Dot1xKey[] = [
  'ca_cert',
  'client_cert',
  'private_key',
  'private_key_password',
  'private_key_password_file',
];
const CLIENT_KEYS: readonly Dot1xKey[] = [
  'client_cert',
  'private_key',
  'private_key_password',
  'private_key_password_file',
];

function profileOf(dot1x: Dot1x): EapProfile {
  switch (dot1x.eap) {
    case 'md5':
      return {
        label: 'EAP-MD5',
        required: [],
        refused: ['inner', 'peap_version', 'anonymous_identity', 'inner_tls', ...CERT_KEYS],
      };
    case 'tls':
      return {
        label: 'EAP-TLS',
        required: ['ca_cert', 'private_key'],
        refused: ['inner', 'peap_version', 'password', 'password_file', 'inner_tls'],
      };
    case 'peap':
      return dot1x.inner === 'tls'
        ? {
            label: 'PEAP with inner EAP-TLS',
            required: ['inner_tls'],
            refused: ['password', 'password_file', ...CLIENT_KEYS],
          }
        : { label: 'PEAP with EAP-MSCHAPv2', required: [], refused: ['inner_tls', ...CLIENT_KEYS] };
  }
}

export function checkDot1x(dot1x: Dot1x, path: KeyPath, options: { wireless: boolean }): UnplacedProblem[] {
  const problems: UnplacedProblem[] = [];
  const error = (at: KeyPath, message: string, hint?: string, atKey = false): void => {
    problems.push({
      severity: Severity.Error,
      path: at,
      message,
      ...(hint === undefined ? {} : { hint }),
      ...(atKey ? { atKey } : {}),
    });
  };

  // Which keys fit depends on the EAP type (and PEAP's inner method): unknown, only the secrets are judged.
  if (dot1x.eap === undefined || (dot1x.eap === 'peap' && wasRefused(dot1x, 'inner'))) {
    problems.push(...atMostOneSecret(dot1x, 'password', path), ...atMostOneSecret(dot1x, 'private_key_password', path));
    return problems;
  }
  if (options.wireless && dot1x.eap === 'md5') {
    error([...path, 'eap'], 'EAP-MD5 is refused on wireless interfaces', 'use peap or tls for wpa2-enterprise');
  }
  if (dot1x.eap === 'peap' && !given(dot1x, 'inner')) {
    error(path, 'PEAP needs an inner method', 'add inner: mschapv2 or inner: tls');
  }

  const profile = profileOf(dot1x);
  for (const key of profile.refused) {
    if (!given(dot1x, key)) continue;
    error([...path, key], `'${key}' does not fit ${profile.label}`, `remove ${key}, or change eap`, true);
  }
  for (const key of profile.required) {
    if (given(dot1x, key)) continue;
    error(path, `${profile.label} needs '${key}'`, requiredHint(key));
  }

  const needsPassword = dot1x.eap === 'md5' || (dot1x.eap === 'peap' && dot1x.inner === 'mschapv2');
  // Where a password does not fit, it was refused above already.
  if (needsPassword) problems.push(...exactlyOneSecret(dot1x, 'password', path, `${profile.label} needs a password`));
  problems.push(...atMostOneSecret(dot1x, 'private_key_password', path));

  if (dot1x.eap === 'peap' && !given(dot1x, 'ca_cert')) {
    problems.push({
      severity: Severity.Warning,
      path,
      message: 'PEAP without ca_cert: the Monitoring Point will not verify the RADIUS server',
      hint: 'add ca_cert: with the CA that issued the RADIUS server certificate',
    });
  }
  if (dot1x.inner_tls !== undefined) {
    const inner = dot1x.inner_tls;
    problems.push(...atMostOneSecret(inner, 'private_key_password', [...path, 'inner_tls']));
    // The device requires wpa_ca_cert2: the inner TLS verifies the server with its own CA.
    if (!given(inner, 'ca_cert')) {
      error(
        [...path, 'inner_tls'],
        "PEAP with inner EAP-TLS needs 'inner_tls.ca_cert'",
        'add ca_cert: to inner_tls with the CA that issued the RADIUS server certificate',
      );
    }
  }
  return problems;
}

function requiredHint(key: Dot1xKey): string {
  switch (key) {
    case 'ca_cert':
      return 'add ca_cert: with the CA that issued the RADIUS server certificate';
    case 'private_key':
      return 'add private_key: (PEM, DER or PFX)';
    case 'inner_tls':
      return 'add inner_tls: { client_cert: ..., private_key: ... }';
    default:
      return `add ${key}:`;
  }
}

/** `password` and `password_file` (likewise passphrase, private_key_password): exactly one. */
export function exactlyOneSecret(
  block: Record<string, unknown>,
  key: string,
  path: KeyPath,
  missingMessage: string,
): UnplacedProblem[] {
  const inline = given(block, key);
  const fromFile = given(block, `${key}_file`);
  if (!inline && !fromFile) {
    return [{ severity: Severity.Error, path, message: missingMessage, hint: `add ${key}: or ${key}_file:` }];
  }
  return atMostOneSecret(block, key, path);
}

export function atMostOneSecret(block: Record<string, unknown>, key: string, path: KeyPath): UnplacedProblem[] {
  if (!given(block, key) || !given(block, `${key}_file`)) return [];
  return [
    {
      severity: Severity.Error,
      path: [...path, `${key}_file`],
      message: `${key} is given twice, as ${key} and as ${key}_file`,
      hint: `keep one of ${key} and ${key}_file`,
      atKey: true,
    },
  ];
}
