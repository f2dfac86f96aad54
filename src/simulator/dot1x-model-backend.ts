import { X509Certificate } from 'node:crypto';
import type { AuthenticatorProfile, PemFile, UserMethod } from './authenticator-profile.js';
import { openPrivateKey, readCertificates } from './credential-reader.js';
import type { Dot1xBackend, Dot1xFiles, Dot1xResult } from './dot1x-backend.js';
import type { FileSlot, Stanza } from './stanza.js';

/**
 * The 802.1X decision without a wire: what hostapd's EAP server and wpa_supplicant would
 * conclude, judged from the stanza, the device's active files and the port's profile. The cases
 * follow what real hostapd/wpa_supplicant runs showed (docs/simulator.md, "The real backend"): wrong password, client
 * certificate from another CA, expired or not-yet-valid client certificate, key not matching the
 * certificate, EAP type the server does not offer, a RADIUS certificate the stanza's CA did not
 * issue. Not modelled: server name matching (the model has no domain_suffix_match field) and
 * chains longer than the files carry. Cases are checked against the real backend
 * (dot1x-real-backend.ts) by test/dot1x: both must agree.
 */
export const modelDot1xBackend: Dot1xBackend = {
  authenticate(profile, stanza, files) {
    return Promise.resolve(decide(profile, stanza, files, new Date()));
  },
};

const deny = (reason: string): Dot1xResult => ({ authorized: false, reason });

function decide(profile: AuthenticatorProfile, s: Stanza, files: Dot1xFiles, now: Date): Dot1xResult {
  if (s.wpa_eap === undefined) return deny('802.1X is disabled on the interface, but its switch port demands it');
  const outer = s.wpa_eap === 'PEAP' ? 'peap' : s.wpa_eap === 'TLS' ? 'tls' : 'md5';
  if (!profile.eapMethods.includes(outer)) {
    return deny(
      `EAP type ${s.wpa_eap} is not offered by the switch port's authentication server (it offers ${profile.eapMethods.join(', ')})`,
    );
  }
  const method: UserMethod = outer === 'peap' ? (s.wpa_phase2 === 'auth=TLS' ? 'peap-tls' : 'peap-mschapv2') : outer;
  // The identity the server decides on. PEAP: the inner one, inside the tunnel. EAP-TLS and MD5:
  // the one wpa_supplicant sends, which is wpa_anonymous_identity when the stanza has one (the
  // real backend showed it: hostapd never sees wpa_identity then).
  const identity = (outer === 'peap' ? s.wpa_identity : (s.wpa_anonymous_identity ?? s.wpa_identity)) ?? '';
  const entries = profile.users.filter((u) => u.identity === identity);
  if (entries.length === 0) return deny(`identity "${identity}" is unknown to the authentication server`);
  // Entries of one identity add up, as the eap_user lines rendered from them do; for each method
  // the first entry listing it holds the password.
  const user = entries.find((u) => u.methods.includes(method));
  if (user === undefined) return deny(`identity "${identity}" may not use ${method}`);

  switch (method) {
    case 'md5':
    case 'peap-mschapv2': {
      const tunnel =
        method === 'peap-mschapv2' ? serverTrusted(profile, s.wpa_ca_cert, 'wpa_ca_cert', files, now) : undefined;
      if (tunnel !== undefined) return deny(tunnel);
      if (s.wpa_password !== user.password) return deny(`wrong password for identity "${identity}"`);
      return { authorized: true, reason: `authorized by ${method} as "${identity}"` };
    }
    case 'tls': {
      const problem =
        serverTrusted(profile, s.wpa_ca_cert, 'wpa_ca_cert', files, now) ??
        clientCredentials(profile, files, now, {
          cert: s.wpa_client_cert,
          key: s.wpa_private_key,
          password: s.wpa_private_key_passwd,
          set: '',
        });
      return problem === undefined
        ? { authorized: true, reason: `authorized by EAP-TLS as "${identity}"` }
        : deny(problem);
    }
    case 'peap-tls': {
      const problem =
        serverTrusted(profile, s.wpa_ca_cert, 'wpa_ca_cert', files, now) ??
        serverTrusted(profile, s.wpa_ca_cert2, 'wpa_ca_cert2', files, now) ??
        clientCredentials(profile, files, now, {
          cert: s.wpa_client_cert2,
          key: s.wpa_private_key2,
          password: s.wpa_private_key2_passwd,
          set: '2',
        });
      return problem === undefined
        ? { authorized: true, reason: `authorized by PEAP with inner EAP-TLS as "${identity}"` }
        : deny(problem);
    }
  }
}

/** The supplicant's check of the RADIUS server certificate; no CA file means no check, as in wpa_supplicant. */
function serverTrusted(
  profile: AuthenticatorProfile,
  caName: string | undefined,
  slot: FileSlot,
  files: Dot1xFiles,
  now: Date,
): string | undefined {
  if (caName === undefined) return undefined;
  const server = firstCertificate(profile.serverCert);
  if (server === undefined) return 'the authentication server has no certificate for a TLS-based method';
  const caFile = files.get(slot, caName);
  if (caFile === undefined) return `${slot} file "${caName}" is not active on the device`;
  const cas = readCertificates(caFile);
  if (!cas.some((ca) => issued(ca, server))) {
    return `the supplicant rejects the authentication server: its certificate (${server.subject.replace(/\n/g, ', ')}) was not issued by ${slot} "${caName}"`;
  }
  if (!validAt(server, now))
    return 'the supplicant rejects the authentication server: its certificate is not valid now';
  return undefined;
}

interface CredentialSet {
  cert: string | undefined;
  key: string | undefined;
  password: string | undefined;
  /** '' for the first set, '2' for PEAP's inner set: names the fields in reasons. */
  set: '' | '2';
}

/** The authentication server's check of the client certificate and the supplicant's use of its key. */
function clientCredentials(
  profile: AuthenticatorProfile,
  files: Dot1xFiles,
  now: Date,
  c: CredentialSet,
): string | undefined {
  const keySlot = `wpa_private_key${c.set}` as FileSlot;
  const certSlot = `wpa_client_cert${c.set}` as FileSlot;
  if (c.key === undefined) return `no ${keySlot}`;
  const keyFile = files.get(keySlot, c.key);
  if (keyFile === undefined) return `${keySlot} file "${c.key}" is not active on the device`;
  const opened = openPrivateKey(keyFile, c.password);
  if (opened === undefined) {
    return `the supplicant cannot open ${keySlot} "${c.key}" (wrong or missing wpa_private_key${c.set}_passwd)`;
  }
  let chain = opened.certificates;
  if (c.cert !== undefined) {
    const certFile = files.get(certSlot, c.cert);
    if (certFile === undefined) return `${certSlot} file "${c.cert}" is not active on the device`;
    chain = readCertificates(certFile);
  }
  const leaf = chain.find((cert) => cert.checkPrivateKey(opened.key)) ?? chain[0];
  if (leaf === undefined) return `no client certificate in ${c.cert !== undefined ? certSlot : keySlot}`;
  if (!leaf.checkPrivateKey(opened.key)) return `${keySlot} "${c.key}" does not match the client certificate`;
  if (now < new Date(leaf.validFrom)) return `the client certificate is not valid yet (valid from ${leaf.validFrom})`;
  if (now > new Date(leaf.validTo)) return `the client certificate has expired (valid to ${leaf.validTo})`;
  const trusted = firstCertificate(profile.clientCa);
  if (trusted === undefined) return 'the authentication server trusts no CA for client certificates';
  if (!chainsTo(leaf, chain, trusted)) {
    return "the authentication server rejects the client certificate: it was not issued by the port's client CA";
  }
  return undefined;
}

/** Follows issuers through the certificates the supplicant sends, up to the trusted CA. */
function chainsTo(leaf: X509Certificate, sent: X509Certificate[], trusted: X509Certificate): boolean {
  let current = leaf;
  for (let depth = 0; depth < 8; depth++) {
    if (issued(trusted, current)) return true;
    const next = sent.find((c) => c !== current && c.fingerprint256 !== current.fingerprint256 && issued(c, current));
    if (next === undefined) return false;
    current = next;
  }
  return false;
}

function issued(issuer: X509Certificate, subject: X509Certificate): boolean {
  try {
    return subject.checkIssued(issuer) && subject.verify(issuer.publicKey);
  } catch {
    return false;
  }
}

function validAt(cert: X509Certificate, now: Date): boolean {
  return now >= new Date(cert.validFrom) && now <= new Date(cert.validTo);
}

function firstCertificate(file: PemFile | undefined): X509Certificate | undefined {
  if (file === undefined) return undefined;
  return readCertificates(Buffer.from(file.pem))[0];
}
