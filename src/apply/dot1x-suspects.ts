import type { Dot1xFacts } from '../plan/index.js';

/**
 * Why a switch port (or a wireless network) may not have authorized an interface's 802.1X, most
 * likely first. The Admin API shows no reason, only that no address came, so this is the order of
 * likelihood for the EAP method, with the evidence this run has moved to the front: the client
 * certificate's own dates (a certificate valid at validation may have expired when the port
 * decides), then whatever this run's validator warned about inside the dot1x block.
 */

const Suspect = {
  Password: 'password',
  Identity: 'identity',
  ClientCertificate: 'client-certificate',
  Validity: 'validity',
  ServerCa: 'server-ca',
} as const;
type Suspect = (typeof Suspect)[keyof typeof Suspect];

export interface RankedSuspect {
  suspect: Suspect;
  /** One sentence a technician can act on, with the evidence in brackets. */
  text: string;
}

const DAY_MS = 24 * 60 * 60 * 1000;
/** The validator warns about a certificate expiring within this many days (certs/certificate-checks.ts). */
const EXPIRY_WARNING_DAYS = 30;

/** The likely causes for the method, evidence first, then the method's own order. Pure: `now` is given. */
export function rankSuspects(facts: Dot1xFacts, now: Date): RankedSuspect[] {
  const order = defaultOrder(facts);
  const evidence = new Map<Suspect, { weight: number; notes: string[] }>();
  const note = (suspect: Suspect, weight: number, text: string): void => {
    if (!order.includes(suspect)) return;
    const entry = evidence.get(suspect) ?? { weight: 0, notes: [] };
    entry.weight = Math.max(entry.weight, weight);
    entry.notes.push(text);
    evidence.set(suspect, entry);
  };

  const cert = facts.clientCert;
  if (cert?.notAfter !== undefined && cert.notBefore !== undefined) {
    const notAfter = new Date(cert.notAfter);
    const notBefore = new Date(cert.notBefore);
    // Seen now, not at validation: the strongest evidence this run can have.
    if (notAfter <= now) note(Suspect.Validity, 3, `it expired at ${cert.notAfter}, after this run validated it`);
    else if (notBefore > now) note(Suspect.Validity, 3, `it is valid only from ${cert.notBefore}`);
    else if (notAfter.getTime() - now.getTime() <= EXPIRY_WARNING_DAYS * DAY_MS)
      note(Suspect.Validity, 2, `it expires at ${cert.notAfter}, within ${EXPIRY_WARNING_DAYS} days`);
  }
  for (const warning of facts.warnings) {
    const suspect = suspectOfKey(warning.key, facts);
    if (suspect !== undefined) note(suspect, 2, `validator warning in this run: ${warning.message}`);
  }

  return order
    .map((suspect, index) => ({ suspect, index, weight: evidence.get(suspect)?.weight ?? 0 }))
    .sort((a, b) => b.weight - a.weight || a.index - b.index)
    .map(({ suspect }) => {
      const notes = evidence.get(suspect)?.notes ?? [];
      return { suspect, text: `${sentence(suspect, facts)}${notes.map((n) => ` [${n}]`).join('')}` };
    });
}

/** The method's own order of likelihood: what fails most often first. */
function defaultOrder(facts: Dot1xFacts): Suspect[] {
  const serverCa = facts.caCert === undefined ? [] : [Suspect.ServerCa];
  switch (facts.eap) {
    case 'md5':
      return [Suspect.Password, Suspect.Identity];
    case 'tls':
      return [Suspect.ClientCertificate, Suspect.Identity, Suspect.Validity, ...serverCa];
    case 'peap':
      return facts.inner === 'tls'
        ? [Suspect.ClientCertificate, Suspect.Identity, Suspect.Validity, ...serverCa]
        : [Suspect.Password, Suspect.Identity, ...serverCa];
  }
}

/** Which suspect a validator warning points at, by the key it is placed on. */
function suspectOfKey(key: string, facts: Dot1xFacts): Suspect | undefined {
  const certSet = facts.eap === 'peap' ? 'inner_tls.' : '';
  switch (key) {
    case 'password':
    case 'password_file':
      return Suspect.Password;
    case 'identity':
    case 'anonymous_identity':
      return Suspect.Identity;
    case 'ca_cert':
    case 'inner_tls.ca_cert':
      return Suspect.ServerCa;
    case `${certSet}client_cert`:
    case `${certSet}private_key`:
      return Suspect.ClientCertificate;
    default:
      // The block itself ("PEAP without ca_cert") or a key no cause hangs on.
      return undefined;
  }
}

function sentence(suspect: Suspect, facts: Dot1xFacts): string {
  const cert = facts.clientCert?.source ?? 'the client certificate';
  switch (suspect) {
    case Suspect.Password:
      return `the password is not the one the RADIUS server holds for "${facts.identity}"`;
    case Suspect.Identity:
      return facts.anonymousIdentity === undefined
        ? `the RADIUS server does not know the identity "${facts.identity}"`
        : `the RADIUS server does not know the identity "${facts.identity}" or the outer (anonymous) identity "${facts.anonymousIdentity}" it is first sent under`;
    case Suspect.ClientCertificate:
      return `the RADIUS server does not accept the client certificate ${cert}: its issuer is not a CA the server trusts for client certificates, or the certificate lacks what the server requires (clientAuth)`;
    case Suspect.Validity:
      return `the client certificate ${cert} has expired or is not yet valid by the Monitoring Point's clock`;
    case Suspect.ServerCa:
      return `the RADIUS server's certificate is not issued by ca_cert (${facts.caCert ?? '?'}), so the Monitoring Point refuses the server`;
  }
}
