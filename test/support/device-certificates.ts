import { readFileSync } from 'node:fs';
import { TestPki } from './test-pki.js';

/** A throwaway CA and the HTTPS certificate it issued to a device, as PEM text. */
export interface DeviceCertificates {
  caPem: string;
  serverCertPem: string;
  serverKeyPem: string;
}

/**
 * A CA of its own (each call makes another), and a server certificate for `ipAddress` issued by
 * it, valid for two days: what a device trusted through `tls.ca` presents.
 */
export function deviceCertificates(ipAddress = '127.0.0.1'): DeviceCertificates {
  const pki = new TestPki();
  try {
    const ca = pki.ca('ca', 'mpprov client test CA', { algorithm: 'p256', endDays: 2 });
    const server = pki.issue('server', 'mpprov test device', ca, 'server', {
      algorithm: 'p256',
      endDays: 2,
      san: `IP:${ipAddress}`,
    });
    return {
      caPem: readFileSync(ca.cert, 'utf8'),
      serverCertPem: readFileSync(server.cert, 'utf8'),
      serverKeyPem: readFileSync(server.key, 'utf8'),
    };
  } finally {
    pki.dispose();
  }
}
