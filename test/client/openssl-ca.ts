import { execFileSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

/** A throwaway CA and a server certificate it issued, made with the openssl CLI at test time. */
export interface TestPki {
  caPem: string;
  serverCertPem: string;
  serverKeyPem: string;
}

const EC = ['-newkey', 'ec', '-pkeyopt', 'ec_paramgen_curve:P-256', '-nodes'];

/** A CA, and a server certificate for `ipAddress` issued by it. */
export function createTestPki(ipAddress = '127.0.0.1'): TestPki {
  const dir = mkdtempSync(join(tmpdir(), 'mpprov-client-pki-'));
  const at = (name: string) => join(dir, name);
  const openssl = (args: string[]) => execFileSync('openssl', args, { cwd: dir, stdio: ['ignore', 'ignore', 'pipe'] });
  try {
    openssl([
      'req', '-x509', ...EC, '-keyout', at('ca.key'), '-out', at('ca.pem'), '-days', '2', '-subj', '/CN=mpprov client test CA',
      '-addext', 'basicConstraints=critical,CA:TRUE', '-addext', 'keyUsage=critical,keyCertSign,cRLSign',
    ]);
    openssl(['req', '-new', ...EC, '-keyout', at('server.key'), '-out', at('server.csr'), '-subj', '/CN=mpprov test device']);
    writeFileSync(at('server.ext'), `subjectAltName=IP:${ipAddress}\nbasicConstraints=CA:FALSE\nextendedKeyUsage=serverAuth\n`);
    openssl([
      'x509', '-req', '-in', at('server.csr'), '-CA', at('ca.pem'), '-CAkey', at('ca.key'), '-CAcreateserial',
      '-out', at('server.pem'), '-days', '2', '-extfile', at('server.ext'),
    ]);
    return {
      caPem: readFileSync(at('ca.pem'), 'utf8'),
      serverCertPem: readFileSync(at('server.pem'), 'utf8'),
      serverKeyPem: readFileSync(at('server.key'), 'utf8'),
    };
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}
