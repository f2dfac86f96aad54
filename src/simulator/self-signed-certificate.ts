import { createHash, generateKeyPairSync, randomBytes, sign, X509Certificate, type KeyObject } from 'node:crypto';
import { isIP } from 'node:net';
import * as asn1js from 'asn1js';
import { AsnConvert, AsnSerializer, OctetString } from '@peculiar/asn1-schema';
import {
  AlgorithmIdentifier,
  AttributeTypeAndValue,
  AttributeValue,
  ExtendedKeyUsage,
  Extension,
  Extensions,
  GeneralName,
  id_ce_extKeyUsage,
  id_ce_subjectAltName,
  id_kp_serverAuth,
  Name,
  RelativeDistinguishedName,
  SubjectAlternativeName,
  SubjectPublicKeyInfo,
  TBSCertificate,
  Validity,
  Version,
} from '@peculiar/asn1-x509';
import { SimulatorError, SimulatorErrorCode } from './simulator-error.js';

/**
 * A self-issued TLS server certificate, as a Monitoring Point makes for itself.
 *
 * The structure is @peculiar/asn1-x509's (RFC 5280 schema, DER by @peculiar/asn1-schema), signed
 * by node:crypto with an EC P-256 key. Not @peculiar/x509's generator: it signs through WebCrypto,
 * so it can only issue asynchronously, and this function is synchronous for its many callers (a
 * test server, a fleet of 200 devices); it also needs a global Reflect polyfill (tsyringe) loaded
 * into the process before it, which a library of the product has no business installing. EC, not
 * RSA: RSA key generation takes hundreds of milliseconds per key, far too slow for a fleet or for
 * tests that start many simulators.
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
  // ECDSA signature algorithms take no parameters (RFC 5758 3.2): absent, not NULL.
  const algorithm = new AlgorithmIdentifier({ algorithm: OID.ecdsaWithSha256 });

  const tbsCertificate = new TBSCertificate({
    version: Version.v3,
    serialNumber: serialNumber(),
    signature: algorithm,
    issuer: name,
    // Validity's Time picks UTCTime through 2049 and GeneralizedTime after, as RFC 5280 4.1.2.5 asks.
    validity: new Validity({ notBefore, notAfter }),
    subject: name,
    subjectPublicKeyInfo: subjectPublicKeyInfo(keyPair.publicKey),
    extensions: new Extensions([
      extension(id_ce_subjectAltName, new SubjectAlternativeName(generalNames(options))),
      extension(id_ce_extKeyUsage, new ExtendedKeyUsage([id_kp_serverAuth])),
    ]),
  });
  // Encoded once: signed as it is, then wrapped. asn1-x509's Certificate would encode it again
  // (a third of the time a certificate takes, which a fleet of 200 devices feels).
  const tbs = AsnSerializer.toASN(tbsCertificate);
  // node:crypto signs EC keys with a DER-encoded ECDSA-Sig-Value, the form X.509 wants.
  const signature = sign('sha256', Buffer.from(tbs.toBER()), keyPair.privateKey);
  // Certificate ::= SEQUENCE { tbsCertificate, signatureAlgorithm, signatureValue BIT STRING }
  const certificateDer = Buffer.from(
    new asn1js.Sequence({
      value: [tbs, AsnSerializer.toASN(algorithm), new asn1js.BitString({ valueHex: arrayBufferOf(signature) })],
    }).toBER(),
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

/** Read once per key: a fleet's devices share one key pair. */
const publicKeyInfos = new WeakMap<KeyObject, SubjectPublicKeyInfo>();

function subjectPublicKeyInfo(publicKey: KeyObject): SubjectPublicKeyInfo {
  let info = publicKeyInfos.get(publicKey);
  if (info === undefined) {
    info = AsnConvert.parse(publicKey.export({ type: 'spki', format: 'der' }), SubjectPublicKeyInfo);
    publicKeyInfos.set(publicKey, info);
  }
  return info;
}

function serialNumber(): ArrayBuffer {
  const bytes = randomBytes(16);
  // A serial number is a positive INTEGER: clear the sign bit, and avoid a leading zero byte.
  bytes[0] = ((bytes[0] ?? 1) & 0x7f) | 0x40;
  return arrayBufferOf(bytes);
}

function distinguishedName(commonName: string): Name {
  const attribute = (type: string, value: string): RelativeDistinguishedName =>
    new RelativeDistinguishedName([
      new AttributeTypeAndValue({ type, value: new AttributeValue({ utf8String: value }) }),
    ]);
  return new Name([attribute(OID.organizationName, 'mpprov simulator'), attribute(OID.commonName, commonName)]);
}

function generalNames(options: SelfSignedCertificateOptions): GeneralName[] {
  const ips = options.ipAddresses ?? ['127.0.0.1', '::1'];
  const dns = options.dnsNames ?? ['localhost'];
  // Checked here: the library's own check throws a plain Error, and the operator needs a sentence.
  for (const ip of ips) {
    if (isIP(ip) === 0)
      throw new SimulatorError(SimulatorErrorCode.Usage, `Not an IP address for the certificate: ${ip}.`);
  }
  return [...ips.map((ip) => new GeneralName({ iPAddress: ip })), ...dns.map((d) => new GeneralName({ dNSName: d }))];
}

function extension(id: string, value: object): Extension {
  return new Extension({ extnID: id, critical: false, extnValue: new OctetString(AsnConvert.serialize(value)) });
}

/** The bytes as an ArrayBuffer of their own: the schema takes ArrayBuffer, node gives pooled Buffers. */
function arrayBufferOf(bytes: Buffer): ArrayBuffer {
  const copy = new ArrayBuffer(bytes.length);
  new Uint8Array(copy).set(bytes);
  return copy;
}
