import { copyFileSync } from 'node:fs';
import { basename, dirname, join } from 'node:path';
import { TestPki, type Issued } from '../certs/openssl-pki.js';
import { profilesDir } from '../apply/stick-workspace.js';

/**
 * Certificates the committed throwaway PKI (profiles/certs) does not hold, made at test time with
 * the openssl CLI: a client certificate from another CA, a CA that did not issue the RADIUS
 * server's certificate, a client certificate already expired, and one that expires a few
 * seconds after it is made (valid when the stick is validated, expired when the port decides).
 */
export class MatrixPki {
  readonly pki = new TestPki();
  /** The profiles' client CA, which the matrix port trusts for client certificates. */
  readonly clientCa: Issued = { cert: join(profilesDir, 'certs/client-ca.pem'), key: join(profilesDir, 'certs/client-ca.key') };
  private made = 0;

  /** other-ca.pem and a client certificate it issued for mp01 (other-client.pem / .key). */
  otherCaClient(): string[] {
    const otherCa = this.pki.ca('other-ca', 'mpprov TEST other CA', { algorithm: 'p256' });
    const client = this.pki.issue('other-client', 'mp01.test.invalid', otherCa, 'client', { algorithm: 'p256' });
    return [client.cert, client.key];
  }

  /** A CA that issued nothing the port uses: the stick trusts it instead of the radius CA. */
  otherRadiusCa(): string[] {
    return [this.pki.ca('other-radius-ca', 'mpprov TEST other radius CA', { algorithm: 'p256' }).cert];
  }

  /** A client certificate from the client CA that expired a year ago. */
  expiredClient(): string[] {
    const c = this.pki.issue('expired-client', 'mp01.test.invalid', this.clientCa, 'client', { algorithm: 'p256', startDays: -730, endDays: -365 });
    return [c.cert, c.key];
  }

  /** A client certificate from the client CA that expires `seconds` from now; fresh names each call. */
  expiringClient(seconds: number): string[] {
    this.made += 1;
    const name = `expiring-client-${this.made}`;
    const key = this.pki.key(`${name}.key`, 'p256');
    const c = this.pki.issue(name, 'mp01.test.invalid', this.clientCa, 'client', {
      key,
      startDays: -1,
      // Relative to the PKI's reference time, which is older than now: measure from now.
      endDays: (Date.now() - this.pki.reference.getTime()) / 86_400_000 + seconds / 86_400,
    });
    return [c.cert, c.key];
  }

  dispose(): void {
    this.pki.dispose();
  }
}

/** Copies files into the stick's certs/ folder (beside the profiles' certificates) under their own names. */
export function addToStick(stickFile: string, files: readonly string[]): void {
  for (const file of files) copyFileSync(file, join(dirname(stickFile), 'certs', basename(file)));
}
