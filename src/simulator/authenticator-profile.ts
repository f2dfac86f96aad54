import { readFile } from 'node:fs/promises';
import { dirname, resolve } from 'node:path';
import { parse as parseYaml } from 'yaml';
import { z } from 'zod';
import { describeIssues, list, nonEmpty, oneOf } from './field-sentences.js';
import { SimulatorError, SimulatorErrorCode, unreadableFile } from './simulator-error.js';

/**
 * What a switch port demands of the device's supplicant: the authenticator (switch) and its
 * authentication server (RADIUS). One YAML file per port, with paths relative to the file. The
 * format holds everything a real hostapd with its internal EAP server needs too (eap_user lines
 * from `users`, ca_cert/server_cert/private_key from the PEM files), so a hostapd backend can take
 * the same profiles later.
 */

export const EAP_METHODS = ['peap', 'tls', 'md5'] as const;
export type EapMethod = (typeof EAP_METHODS)[number];

/** What a user may do; PEAP is split by its inner method, as hostapd's phase-2 eap_user lines are. */
export const USER_METHODS = ['peap-mschapv2', 'peap-tls', 'tls', 'md5'] as const;
export type UserMethod = (typeof USER_METHODS)[number];

const AuthenticatorProfileFile = z.strictObject({
  eap_methods: list(oneOf(EAP_METHODS), 'a list of EAP methods (peap, tls, md5)'),
  client_ca: nonEmpty('a file path').optional(),
  server_cert: nonEmpty('a file path').optional(),
  server_key: nonEmpty('a file path').optional(),
  server_id: nonEmpty('a server name').optional(),
  users: list(
    z.strictObject({
      identity: nonEmpty('an identity'),
      password: nonEmpty('a password').optional(),
      methods: list(oneOf(USER_METHODS), 'a list of methods (peap-mschapv2, peap-tls, tls, md5)'),
    }),
    'a list of users',
  ),
});

export interface PemFile {
  /** Absolute path, for a backend that hands files to a real daemon. */
  path: string;
  pem: string;
}

interface ProfileUser {
  identity: string;
  password?: string | undefined;
  methods: UserMethod[];
}

export interface AuthenticatorProfile {
  /** The file it came from, for messages; undefined when built in code. */
  file?: string | undefined;
  eapMethods: EapMethod[];
  /** Trusted for client certificates (EAP-TLS and PEAP's inner EAP-TLS). */
  clientCa?: PemFile | undefined;
  /** The RADIUS server's certificate, which the stanza's wpa_ca_cert must have issued. */
  serverCert?: PemFile | undefined;
  serverKey?: PemFile | undefined;
  serverId?: string | undefined;
  users: ProfileUser[];
}

export async function loadAuthenticatorProfile(file: string): Promise<AuthenticatorProfile> {
  let text: string;
  try {
    text = await readFile(file, 'utf8');
  } catch (cause) {
    throw unreadableFile('authenticator profile', file, cause);
  }
  return parseAuthenticatorProfile(text, file);
}

/** Parses a profile's YAML; file paths inside are relative to `file`. */
export async function parseAuthenticatorProfile(text: string, file: string): Promise<AuthenticatorProfile> {
  const invalid = (message: string) =>
    new SimulatorError(SimulatorErrorCode.FileInvalid, `Authenticator profile ${file}: ${message}`);
  let raw: unknown;
  try {
    raw = parseYaml(text, { logLevel: 'error' });
  } catch (cause) {
    throw new SimulatorError(SimulatorErrorCode.FileInvalid, `Authenticator profile ${file} is not valid YAML.`, {
      cause,
    });
  }
  const parsed = AuthenticatorProfileFile.safeParse(raw ?? {});
  if (!parsed.success) throw invalid(describeIssues(parsed.error.issues));
  const p = parsed.data;
  const usesTls = p.eap_methods.includes('peap') || p.eap_methods.includes('tls');
  if (usesTls && (p.server_cert === undefined || p.server_key === undefined)) {
    throw invalid('Fields "server_cert" and "server_key" are required when eap_methods has peap or tls.');
  }
  for (const [i, user] of p.users.entries()) {
    const needsPassword = user.methods.find((m) => m === 'md5' || m === 'peap-mschapv2');
    if (needsPassword !== undefined && user.password === undefined) {
      throw invalid(`Field "users[${i}].password" is required for method "${needsPassword}".`);
    }
    if (user.methods.some((m) => m === 'tls' || m === 'peap-tls') && p.client_ca === undefined) {
      throw invalid(`Field "client_ca" is required: users[${i}] may use certificates.`);
    }
  }
  const load = async (field: string, path: string | undefined): Promise<PemFile | undefined> => {
    if (path === undefined) return undefined;
    const absolute = resolve(dirname(file), path);
    try {
      return { path: absolute, pem: await readFile(absolute, 'utf8') };
    } catch (cause) {
      throw new SimulatorError(
        SimulatorErrorCode.FileUnreadable,
        `Authenticator profile ${file}: cannot read "${field}" file ${absolute}.`,
        { cause },
      );
    }
  };
  return {
    file,
    eapMethods: p.eap_methods,
    clientCa: await load('client_ca', p.client_ca),
    serverCert: await load('server_cert', p.server_cert),
    serverKey: await load('server_key', p.server_key),
    serverId: p.server_id,
    users: p.users.map((u) => ({ identity: u.identity, password: u.password, methods: u.methods })),
  };
}
