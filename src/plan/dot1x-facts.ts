import type { ValidatedStick } from '../certs/index.js';
import { formatKeyPath, type Interface, type KeyPath, Severity } from '../config/index.js';
import { visibleText } from '../core/visible-text.js';
import type { Dot1xFacts } from './plan-types.js';

/**
 * What the stick says about one interface's 802.1X, kept for the moment a switch port refuses it:
 * the method, the identities, the files by the names the technician wrote, the client
 * certificate's validity (a certificate valid at validation may have expired when the port
 * decides), and this run's validator warnings inside the dot1x block. Never a secret.
 */
export function dot1xFacts(stick: ValidatedStick, at: KeyPath, iface: Interface): Dot1xFacts | undefined {
  const dot1x = iface.dot1x;
  if (dot1x === undefined) return undefined;
  const block = [...at, 'dot1x'];
  const blockPath = formatKeyPath(block);
  const fileName = (path: KeyPath): string | undefined => stick.files.get(formatKeyPath(path))?.name;

  const facts: Dot1xFacts = {
    eap: dot1x.eap,
    wireless: iface.wireless !== undefined,
    identity: dot1x.identity,
    warnings: [],
  };
  if (dot1x.eap === 'peap') facts.inner = dot1x.inner ?? 'mschapv2';
  if (dot1x.anonymous_identity !== undefined) facts.anonymousIdentity = dot1x.anonymous_identity;
  const ca = fileName([...block, 'ca_cert']);
  if (ca !== undefined) facts.caCert = ca;
  const innerCa = fileName([...block, 'inner_tls', 'ca_cert']);
  if (innerCa !== undefined) facts.innerCaCert = innerCa;

  // The certificate the port judges: the set's own for TLS, the inner one for PEAP with inner TLS.
  const set = dot1x.eap === 'tls' ? block : facts.inner === 'tls' ? [...block, 'inner_tls'] : undefined;
  if (set !== undefined) {
    const client = clientCertificate(stick, set);
    if (client !== undefined) facts.clientCert = client;
  }

  const others = installedCertificates(stick, block, dot1x.inner_tls === undefined ? [[]] : [[], ['inner_tls']]);
  if (others.length > 0) facts.otherCertificates = others;

  for (const problem of stick.problems) {
    if (problem.severity !== Severity.Warning) continue;
    if (problem.path !== blockPath && !problem.path.startsWith(`${blockPath}.`)) continue;
    facts.warnings.push({ key: problem.path.slice(blockPath.length + 1), message: problem.message });
  }
  return facts;
}

/**
 * The client certificate of a credential set: its file as the technician named it, and its
 * validity as certificate validation learnt it (for a PFX, while the key was open: the plan
 * never decrypts a key again).
 */
function clientCertificate(stick: ValidatedStick, set: KeyPath): Dot1xFacts['clientCert'] {
  const source =
    stick.files.get(formatKeyPath([...set, 'client_cert']))?.name ??
    stick.files.get(formatKeyPath([...set, 'private_key']))?.name;
  if (source === undefined) return undefined;
  const validity = stick.credentials.get(formatKeyPath(set))?.clientCertValidity;
  return { source, ...(validity ?? {}) };
}

/**
 * The certificates besides the client certificate that the block's credential sets install, each
 * named by the file the technician wrote (and which one, among several): from what validation
 * learnt, so a PFX is not decrypted again.
 */
function installedCertificates(
  stick: ValidatedStick,
  block: KeyPath,
  sets: readonly (readonly string[])[],
): NonNullable<Dot1xFacts['otherCertificates']> {
  const found: NonNullable<Dot1xFacts['otherCertificates']> = [];
  for (const set of sets) {
    const learnt = stick.credentials.get(formatKeyPath([...block, ...set]))?.otherCertificates ?? [];
    for (const cert of learnt) {
      const name = stick.files.get(formatKeyPath([...block, ...set, cert.key]))?.name;
      if (name === undefined) continue;
      const cn = JSON.stringify(visibleText(cert.commonName.slice(0, 120)));
      const label =
        cert.count > 1
          ? `certificate ${cert.index + 1} (${cn}) in ${name}`
          : cert.key === 'ca_cert'
            ? `the CA certificate ${name}`
            : `the certificate ${cn} in ${name}`;
      found.push({ key: [...set, cert.key].join('.'), label, notBefore: cert.notBefore, notAfter: cert.notAfter });
    }
  }
  return found;
}
