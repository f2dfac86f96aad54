import { X509Certificate, createPrivateKey } from 'node:crypto';
import { execFile } from 'node:child_process';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { describe, expect, it } from 'vitest';
import { createSelfSignedCertificate, fingerprintOfDer, generateEcKeyPair } from '../../src/simulator/index.js';

/** The hand-built EC P-256 certificate: valid X.509 that openssl and node accept. */

describe('createSelfSignedCertificate', () => {
  it('issues a certificate for 127.0.0.1, ::1 and localhost, signed by its own EC P-256 key', () => {
    const certificate = createSelfSignedCertificate();
    const x509 = new X509Certificate(certificate.certificatePem);
    expect(x509.subjectAltName).toBe('IP Address:127.0.0.1, IP Address:0:0:0:0:0:0:0:1, DNS:localhost');
    expect(x509.checkIssued(x509)).toBe(true);
    expect(x509.verify(x509.publicKey)).toBe(true);
    expect(x509.checkPrivateKey(createPrivateKey(certificate.privateKeyPem))).toBe(true);
    expect(x509.publicKey.asymmetricKeyDetails?.namedCurve).toBe('prime256v1');
    expect(x509.fingerprint256).toBe(certificate.fingerprintSha256);
    expect(fingerprintOfDer(certificate.certificateDer)).toBe(certificate.fingerprintSha256);
    expect(new Date(x509.validFrom).getTime()).toBeLessThan(Date.now());
    expect(new Date(x509.validTo).getTime()).toBeGreaterThan(Date.now() + 365 * 86_400_000);
  });

  it('takes other names, and a shared key pair still gives each certificate its own fingerprint', () => {
    const keyPair = generateEcKeyPair();
    const a = createSelfSignedCertificate({
      keyPair,
      ipAddresses: ['192.0.2.10', '2001:db8::10'],
      dnsNames: ['mp01.lab'],
    });
    const b = createSelfSignedCertificate({ keyPair });
    expect(new X509Certificate(a.certificatePem).subjectAltName).toBe(
      'IP Address:192.0.2.10, IP Address:2001:DB8:0:0:0:0:0:10, DNS:mp01.lab',
    );
    expect(a.privateKeyPem).toBe(b.privateKeyPem);
    expect(a.fingerprintSha256).not.toBe(b.fingerprintSha256);
  });

  it('writes GeneralizedTime after 2049, as RFC 5280 requires', () => {
    const certificate = createSelfSignedCertificate({ validFrom: new Date('2049-06-01T00:00:00Z'), validDays: 365 });
    expect(new X509Certificate(certificate.certificatePem).validTo).toBe('Jun  1 00:00:00 2050 GMT');
  });

  it('is accepted by openssl verify as its own trust anchor', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'mpprov-sim-cert-'));
    try {
      const file = join(dir, 'device.pem');
      await writeFile(file, createSelfSignedCertificate().certificatePem);
      const { stdout } = await promisify(execFile)('openssl', ['verify', '-CAfile', file, file]);
      expect(stdout.trim()).toBe(`${file}: OK`);
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  });
});
