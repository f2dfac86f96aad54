import { createHash, generateKeyPairSync, randomBytes, sign, X509Certificate, type KeyObject } from 'node:crypto';
import { isIPv4, isIPv6 } from 'node:net';
import forge from 'node-forge';

/**
 * A self-issued TLS server certificate, as a Monitoring Point makes for itself.
 *
 * Built by hand (TBSCertificate with forge.asn1, signed by node:crypto) with an EC P-256 key,
 * because forge's RSA key generation takes hundreds of milliseconds per key: far too slow for a
 * fleet of 200 simulated devices or for tests that start many simulators.
 */
export interface SelfSignedCertificate {
  certificatePem: string;
  certificateDer: Buffer;
  privateKeyPem: string;
  /** SHA-256 of the DER certificate, colon-separated upper-case hex: the value a stick pins. */
  fingerprintSha256: string;
}

export interface EcKeyPair {
  privateKey: KeyObject;
  publicKey: KeyObject;
}

export interface SelfSignedCertificateOptions {
  commonName?: string;
  ipAddresses?: readonly string[];
  dnsNames?: readonly string[];
  /** Reuse a key pair (fleet mode): each device still gets its own certificate and fingerprint. */
  keyPair?: EcKeyPair;
  validFrom?: Date;
  validDays?: number;
}

const OID = {
  ecdsaWithSha256: '1.2.840.10045.4.3.2',
  commonName: '2.5.4.3',
  organizationName: '2.5.4.10',
  subjectAltName: '2.5.29.17',
  extKeyUsage: '2.5.29.37',
  serverAuth: '1.3.6.1.5.5.7.3.1',
} as const;

const DAY_MS = 86_400_000;

export function generateEcKeyPair(): EcKeyPair {
  return generateKeyPairSync('ec', { namedCurve: 'P-256' });
}

/** Issues a self-signed certificate; SAN defaults to IP 127.0.0.1, IP ::1 and DNS localhost. */
export function createSelfSignedCertificate(options: SelfSignedCertificateOptions = {}): SelfSignedCertificate {
  const keyPair = options.keyPair ?? generateEcKeyPair();
  // Start a day early so a client whose clock runs slightly behind still accepts the certificate.
  const notBefore = options.validFrom ?? new Date(Date.now() - DAY_MS);
  const notAfter = new Date(notBefore.getTime() + (options.validDays ?? 3 * 365) * DAY_MS);
  const name = distinguishedName(options.commonName ?? 'mpprov simulated Monitoring Point');

  const tbs = seq([
    explicit(0, [integer(Buffer.from([2]))]), // version v3
    integer(serialNumber()),
    seq([oid(OID.ecdsaWithSha256)]),
    name,
    seq([time(notBefore), time(notAfter)]),
    name,
    forge.asn1.fromDer(binary(keyPair.publicKey.export({ type: 'spki', format: 'der' }))),
    explicit(3, [seq([subjectAltName(options), extendedKeyUsageServerAuth()])]),
  ]);
  const tbsDer = der(tbs);
  // node:crypto signs EC keys with a DER-encoded ECDSA-Sig-Value, the form X.509 wants.
  const signature = sign('sha256', tbsDer, keyPair.privateKey);
  const certificateDer = der(
    seq([
      forge.asn1.fromDer(binary(tbsDer)),
      seq([oid(OID.ecdsaWithSha256)]),
      // BIT STRING content: one leading byte for the number of unused bits (0).
      node(forge.asn1.Type.BITSTRING, binary(Buffer.concat([Buffer.from([0]), signature]))),
    ]),
  );
  return {
    certificateDer,
    certificatePem: toPem(certificateDer),
    privateKeyPem: keyPair.privateKey.export({ type: 'pkcs8', format: 'pem' }).toString(),
    fingerprintSha256: fingerprintOfDer(certificateDer),
  };
}

/** Colon-separated upper-case SHA-256 hex of a DER certificate. */
export function fingerprintOfDer(certificateDer: Uint8Array): string {
  const hex = createHash('sha256').update(certificateDer).digest('hex').toUpperCase();
  return hex.match(/../g)?.join(':') ?? '';
}

/** Fingerprint of a PEM or DER certificate given by the operator (--cert). */
export function fingerprintOfCertificate(certificate: string | Buffer): string {
  return new X509Certificate(certificate).fingerprint256;
}

function toPem(certificateDer: Buffer): string {
  const lines = certificateDer.toString('base64').match(/.{1,64}/g) ?? [];
  return `-----BEGIN CERTIFICATE-----\n${lines.join('\n')}\n-----END CERTIFICATE-----\n`;
}

function serialNumber(): Buffer {
  const bytes = randomBytes(16);
  // A serial number is a positive INTEGER: clear the sign bit, and avoid a leading zero byte.
  bytes[0] = ((bytes[0] ?? 1) & 0x7f) | 0x40;
  return bytes;
}

function distinguishedName(commonName: string): forge.asn1.Asn1 {
  const attribute = (type: string, value: string): forge.asn1.Asn1 =>
    node(forge.asn1.Type.SET, [seq([oid(type), node(forge.asn1.Type.UTF8, forge.util.encodeUtf8(value))])]);
  return seq([attribute(OID.organizationName, 'mpprov simulator'), attribute(OID.commonName, commonName)]);
}

function subjectAltName(options: SelfSignedCertificateOptions): forge.asn1.Asn1 {
  const ips = options.ipAddresses ?? ['127.0.0.1', '::1'];
  const dns = options.dnsNames ?? ['localhost'];
  const names = [
    ...ips.map((ip) => contextPrimitive(7, binary(ipBytes(ip)))),
    ...dns.map((d) => contextPrimitive(2, d)),
  ];
  return extension(OID.subjectAltName, seq(names));
}

function extendedKeyUsageServerAuth(): forge.asn1.Asn1 {
  return extension(OID.extKeyUsage, seq([oid(OID.serverAuth)]));
}

function extension(id: string, value: forge.asn1.Asn1): forge.asn1.Asn1 {
  return seq([oid(id), node(forge.asn1.Type.OCTETSTRING, forge.asn1.toDer(value).getBytes())]);
}

function ipBytes(ip: string): Buffer {
  if (isIPv4(ip)) return Buffer.from(ip.split('.').map(Number));
  if (!isIPv6(ip)) throw new Error(`Not an IP address for the certificate: ${ip}`);
  const [head = '', tail = ''] = ip.split('::');
  const groups = (part: string): number[] => (part === '' ? [] : part.split(':').map((g) => parseInt(g, 16)));
  const left = groups(head);
  const right = ip.includes('::') ? groups(tail) : [];
  const all = [...left, ...new Array<number>(8 - left.length - right.length).fill(0), ...right];
  const out = Buffer.alloc(16);
  all.forEach((g, i) => out.writeUInt16BE(g, i * 2));
  return out;
}

function time(date: Date): forge.asn1.Asn1 {
  // UTCTime covers 1950-2049; later dates must be GeneralizedTime (RFC 5280 4.1.2.5).
  return date.getUTCFullYear() < 2050
    ? node(forge.asn1.Type.UTCTIME, forge.asn1.dateToUtcTime(date))
    : node(forge.asn1.Type.GENERALIZEDTIME, forge.asn1.dateToGeneralizedTime(date));
}

function seq(items: forge.asn1.Asn1[]): forge.asn1.Asn1 {
  return forge.asn1.create(forge.asn1.Class.UNIVERSAL, forge.asn1.Type.SEQUENCE, true, items);
}

function node(type: forge.asn1.Type, value: string | forge.asn1.Asn1[]): forge.asn1.Asn1 {
  return forge.asn1.create(forge.asn1.Class.UNIVERSAL, type, Array.isArray(value), value);
}

function integer(bytes: Buffer): forge.asn1.Asn1 {
  return node(forge.asn1.Type.INTEGER, binary(bytes));
}

function oid(id: string): forge.asn1.Asn1 {
  return node(forge.asn1.Type.OID, forge.asn1.oidToDer(id).getBytes());
}

function explicit(tag: number, items: forge.asn1.Asn1[]): forge.asn1.Asn1 {
  return forge.asn1.create(forge.asn1.Class.CONTEXT_SPECIFIC, tag, true, items);
}

function contextPrimitive(tag: number, value: string): forge.asn1.Asn1 {
  return forge.asn1.create(forge.asn1.Class.CONTEXT_SPECIFIC, tag, false, value);
}

function binary(bytes: Uint8Array): string {
  return Buffer.from(bytes).toString('binary');
}

function der(value: forge.asn1.Asn1): Buffer {
  return Buffer.from(forge.asn1.toDer(value).getBytes(), 'binary');
}
