import { createHash, generateKeyPairSync, randomBytes, sign, X509Certificate, type KeyObject } from 'node:crypto';
import { isIPv4, isIPv6 } from 'node:net';
import {
  bitString,
  explicit,
  implicitPrimitive,
  integer,
  objectIdentifier,
  octetString,
  sequence,
  set,
  time,
  utf8String,
} from './der-writer.js';
import { SimulatorError, SimulatorErrorCode } from './simulator-error.js';

/**
 * A self-issued TLS server certificate, as a Monitoring Point makes for itself.
 *
 * Built by hand (TBSCertificate in DER by der-writer.ts, signed by node:crypto) with an EC P-256
 * key: node:crypto generates keys but cannot issue certificates, and RSA key generation takes
 * hundreds of milliseconds per key, far too slow for a fleet of 200 simulated devices or for tests
 * that start many simulators.
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

  const tbsDer = sequence([
    explicit(0, [integer(Buffer.from([2]))]), // version v3
    integer(serialNumber()),
    sequence([objectIdentifier(OID.ecdsaWithSha256)]),
    name,
    sequence([time(notBefore), time(notAfter)]),
    name,
    keyPair.publicKey.export({ type: 'spki', format: 'der' }),
    explicit(3, [sequence([subjectAltName(options), extendedKeyUsageServerAuth()])]),
  ]);
  // node:crypto signs EC keys with a DER-encoded ECDSA-Sig-Value, the form X.509 wants.
  const signature = sign('sha256', tbsDer, keyPair.privateKey);
  const certificateDer = sequence([tbsDer, sequence([objectIdentifier(OID.ecdsaWithSha256)]), bitString(signature)]);
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

function distinguishedName(commonName: string): Buffer {
  const attribute = (type: string, value: string): Buffer =>
    set([sequence([objectIdentifier(type), utf8String(value)])]);
  return sequence([attribute(OID.organizationName, 'mpprov simulator'), attribute(OID.commonName, commonName)]);
}

function subjectAltName(options: SelfSignedCertificateOptions): Buffer {
  const ips = options.ipAddresses ?? ['127.0.0.1', '::1'];
  const dns = options.dnsNames ?? ['localhost'];
  const names = [
    ...ips.map((ip) => implicitPrimitive(7, ipBytes(ip))),
    ...dns.map((d) => implicitPrimitive(2, Buffer.from(d, 'ascii'))),
  ];
  return extension(OID.subjectAltName, sequence(names));
}

function extendedKeyUsageServerAuth(): Buffer {
  return extension(OID.extKeyUsage, sequence([objectIdentifier(OID.serverAuth)]));
}

function extension(id: string, value: Buffer): Buffer {
  return sequence([objectIdentifier(id), octetString(value)]);
}

function ipBytes(ip: string): Buffer {
  if (isIPv4(ip)) return Buffer.from(ip.split('.').map(Number));
  if (!isIPv6(ip)) throw new SimulatorError(SimulatorErrorCode.Usage, `Not an IP address for the certificate: ${ip}.`);
  const [head = '', tail = ''] = ip.split('::');
  const groups = (part: string): number[] => (part === '' ? [] : part.split(':').map((g) => parseInt(g, 16)));
  const left = groups(head);
  const right = ip.includes('::') ? groups(tail) : [];
  const all = [...left, ...new Array<number>(8 - left.length - right.length).fill(0), ...right];
  const out = Buffer.alloc(16);
  all.forEach((g, i) => out.writeUInt16BE(g, i * 2));
  return out;
}
