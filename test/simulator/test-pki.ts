import { execFile } from 'node:child_process';
import { mkdtemp, readFile, rm, writeFile, mkdir } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';

const run = promisify(execFile);

/**
 * A small 802.1X PKI made with the openssl CLI at test time, as the hostapd/wpa_supplicant lab
 * made its own (shared/reference/dot1x-lab): a CA and a rogue CA, the RADIUS server's
 * certificate, client certificates (good, from the rogue CA, expired, not yet valid) and the
 * client key as PEM, encrypted PEM, DER, PFX and legacy PFX. EC keys keep it fast.
 */
export interface TestPki {
  dir: string;
  path(name: string): string;
  read(name: string): Promise<Buffer>;
  remove(): Promise<void>;
}

export const PFX_PASSWORD = 'pfxpass';
export const KEY_PASSWORD = 'keypass';

const CONFIG = `
[req]
distinguished_name = dn
prompt = no
[dn]
[ca_ext]
basicConstraints = critical,CA:TRUE
keyUsage = critical,keyCertSign,cRLSign
subjectKeyIdentifier = hash
[server_ext]
basicConstraints = critical,CA:FALSE
extendedKeyUsage = serverAuth
subjectAltName = DNS:radius.lab.test
[client_ext]
basicConstraints = critical,CA:FALSE
extendedKeyUsage = clientAuth
[ca]
default_ca = labca
[labca]
database = ./ca-db/index.txt
new_certs_dir = ./ca-db
serial = ./ca-db/serial
default_md = sha256
policy = pol
unique_subject = no
copy_extensions = none
[pol]
commonName = supplied
`;

const EC = ['-newkey', 'ec', '-pkeyopt', 'ec_paramgen_curve:prime256v1'];

export async function createTestPki(): Promise<TestPki> {
  const dir = await mkdtemp(join(tmpdir(), 'mpprov-sim-pki-'));
  const openssl = async (...args: string[]) => {
    await run('openssl', args, { cwd: dir });
  };
  await writeFile(join(dir, 'openssl.cnf'), CONFIG);
  const ca = async (name: string, cn: string) =>
    openssl('req', '-x509', ...EC, '-nodes', '-days', '3650', '-keyout', `${name}.key`, '-out', `${name}.pem`, '-subj', `/CN=${cn}`, '-config', 'openssl.cnf', '-extensions', 'ca_ext');
  const leaf = async (name: string, cn: string, issuer: string, ext: string) => {
    await openssl('req', '-new', ...EC, '-nodes', '-keyout', `${name}.key`, '-out', `${name}.csr`, '-subj', `/CN=${cn}`, '-config', 'openssl.cnf');
    await openssl('x509', '-req', '-in', `${name}.csr`, '-CA', `${issuer}.pem`, '-CAkey', `${issuer}.key`, '-CAcreateserial', '-sha256', '-days', '825', '-out', `${name}.pem`, '-extfile', 'openssl.cnf', '-extensions', ext);
  };
  // `openssl x509 -req` (OpenSSL 3.0) cannot set dates; `openssl ca` can, with a throw-away database.
  const dated = async (name: string, start: string, end: string) => {
    await openssl('req', '-new', ...EC, '-nodes', '-keyout', `${name}.key`, '-out', `${name}.csr`, '-subj', '/CN=client.lab.test', '-config', 'openssl.cnf');
    await openssl('ca', '-batch', '-notext', '-config', 'openssl.cnf', '-cert', 'ca.pem', '-keyfile', 'ca.key', '-in', `${name}.csr`, '-out', `${name}.pem`, '-startdate', start, '-enddate', end, '-extfile', 'openssl.cnf', '-extensions', 'client_ext');
  };

  await Promise.all([ca('ca', 'Lab Root CA'), ca('rogue-ca', 'Rogue CA')]);
  await mkdir(join(dir, 'ca-db'));
  await writeFile(join(dir, 'ca-db', 'index.txt'), '');
  await writeFile(join(dir, 'ca-db', 'serial'), '1000\n');
  await leaf('server', 'radius.lab.test', 'ca', 'server_ext');
  await leaf('client', 'client.lab.test', 'ca', 'client_ext');
  await leaf('rogue-client', 'client.lab.test', 'rogue-ca', 'client_ext');
  await dated('expired-client', '20200101000000Z', '20210101000000Z');
  await dated('future-client', '20990101000000Z', '20991231000000Z');
  await Promise.all([
    openssl('pkey', '-in', 'client.key', '-outform', 'DER', '-out', 'client.key.der'),
    openssl('pkey', '-in', 'client.key', '-aes256', '-passout', `pass:${KEY_PASSWORD}`, '-out', 'client-encrypted.key'),
    openssl('pkcs12', '-export', '-in', 'client.pem', '-inkey', 'client.key', '-certfile', 'ca.pem', '-passout', `pass:${PFX_PASSWORD}`, '-out', 'client.pfx'),
    openssl('pkcs12', '-export', '-legacy', '-in', 'client.pem', '-inkey', 'client.key', '-certfile', 'ca.pem', '-passout', `pass:${PFX_PASSWORD}`, '-out', 'client-legacy.pfx'),
    openssl('genpkey', '-algorithm', 'EC', '-pkeyopt', 'ec_paramgen_curve:prime256v1', '-out', 'other.key'),
    openssl('x509', '-in', 'ca.pem', '-outform', 'DER', '-out', 'ca.der'),
  ]);
  return {
    dir,
    path: (name) => join(dir, name),
    read: (name) => readFile(join(dir, name)),
    remove: () => rm(dir, { recursive: true, force: true }),
  };
}
