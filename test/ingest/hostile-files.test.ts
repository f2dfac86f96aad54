import { execFileSync } from 'node:child_process';
import { mkdirSync, readdirSync, statSync, symlinkSync, writeFileSync } from 'node:fs';
import { createServer, type Server } from 'node:net';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { loadStick } from '../../src/config/index.js';
import {
  MAX_CONFIG_BYTES,
  readConfigFile,
  readReferencedFile,
  snapshotReader,
  snapshotStick,
  fileStickReader,
} from '../../src/ingest/index.js';
import { runCli } from '../support/run-cli.js';
import { tempFolder } from '../support/temp-folder.js';

/**
 * Hostile files on a stick, made for real: FIFOs by mkfifo, a device node by mknod, a listening
 * Unix socket, links out of the stick to a file holding a marker, sparse files of absurd sizes.
 * Each must give a located problem or a note, never hang, never read more than its cap, and the
 * marker of a file outside the stick must appear in no output.
 */

const MARKER = 'MARKER-outside-the-stick-7f3a';
/** What a linked-to file looks like: YAML-ish lines that would be quoted as "unknown key" problems. */
const OUTSIDE_TEXT = `root: ${MARKER}\ndaemon: ${MARKER}-2\n`;

const head = `version: 1
monitoring_points:
  - name: mp1
    url: https://192.0.2.10
    tls: { fingerprint_sha256: ${'ab'.repeat(32)} }
    password: Admin-Pass-4711
    interfaces:
      eth1:
        ipv4: { method: dhcp }
        dot1x:
          eap: peap
          identity: mp01@corp.example
`;

const mounts: string[] = [];

/** A stick: a real tmpfs mount (it holds a 100 TiB sparse file, which ext4 cannot), with the file outside it on the test disk. */
function stick(config: string): { dir: string; outside: string } {
  const base = tempFolder('hostile');
  const dir = join(base, 'stick');
  mkdirSync(dir);
  execFileSync('mount', ['-t', 'tmpfs', '-o', 'size=64m', 'tmpfs', dir]);
  mounts.push(dir);
  const outside = join(base, 'outside.txt');
  writeFileSync(outside, OUTSIDE_TEXT);
  writeFileSync(join(dir, 'mpprov.yaml'), config);
  return { dir, outside };
}

const servers: Server[] = [];
afterEach(async () => {
  for (const server of servers.splice(0)) await new Promise((r) => server.close(r));
  for (const dir of mounts.splice(0)) execFileSync('umount', ['-l', dir]);
});

describe('the configuration file', () => {
  it('a link out of the stick is refused and not one of its lines is quoted (validate, text and --json)', async () => {
    const { dir, outside } = stick('');
    symlinkSync(outside, join(dir, 'mpprov.yaml.tmp'));
    execFileSync('mv', ['-f', join(dir, 'mpprov.yaml.tmp'), join(dir, 'mpprov.yaml')]);
    for (const args of [
      ['validate', dir],
      ['validate', dir, '--json'],
      ['validate', join(dir, 'mpprov.yaml')],
    ]) {
      const result = await runCli(args);
      expect(result.code, result.stdout + result.stderr).toBe(1);
      expect(result.stdout + result.stderr).toContain(
        'the configuration file is a link that leads outside its folder: it was not read',
      );
      expect(result.stdout + result.stderr).not.toContain(MARKER);
    }
  });

  it('a 2 GB sparse mpprov.yaml is refused by its size without being read, in the snapshot and in validation', async () => {
    const { dir } = stick('');
    execFileSync('truncate', ['-s', '2000000000', join(dir, 'mpprov.yaml')]);
    const rssBefore = process.memoryUsage().rss;
    const snapshot = await snapshotStick(dir, 'mpprov.yaml', join(dir, '..', 'copy'));
    const read = await readConfigFile(join(dir, 'mpprov.yaml'));
    // Nothing of it was read: the counter counts every byte a read returned.
    expect(snapshot.bytesRead).toBe(0);
    expect(process.memoryUsage().rss - rssBefore).toBeLessThan(64 * 1024 * 1024);
    expect(read).toMatchObject({
      ok: false,
      message: 'the configuration file is 2000000000 bytes; the limit is 256 KiB',
      tooLarge: 2_000_000_000,
    });
    // The copy is a sparse placeholder, so validation of the copy still names the real size.
    expect(statSync(snapshot.configFile).size).toBe(2_000_000_000);
    expect(statSync(snapshot.configFile).blocks).toBe(0);
    const loaded = await loadStick(snapshot.configFile, { label: 'mpprov.yaml' });
    expect(loaded.problems.map((p) => `${p.line}:${p.column} ${p.message}`)).toEqual([
      '1:1 the configuration file is 2000000000 bytes; the limit is 256 KiB',
    ]);
  });

  it('a FIFO as mpprov.yaml is refused at once, unopened', async () => {
    const { dir } = stick('');
    execFileSync('rm', [join(dir, 'mpprov.yaml')]);
    execFileSync('mkfifo', [join(dir, 'mpprov.yaml')]);
    expect(await readConfigFile(join(dir, 'mpprov.yaml'))).toEqual({
      ok: false,
      message: 'the configuration file is a FIFO (named pipe), not a regular file',
      hint: 'copy the file itself onto the stick',
    });
    await expect(snapshotStick(dir, 'mpprov.yaml', join(dir, '..', 'copy'))).rejects.toThrow(
      'mpprov.yaml is a FIFO (named pipe), not a regular file',
    );
  });
});

describe('files the configuration names', () => {
  it(
    'a FIFO as ca_cert and as password_file is a located problem, and validate ends',
    { timeout: 30_000 },
    async () => {
      const config =
        head.replace('    password: Admin-Pass-4711\n', '    password_file: admin.pw\n') +
        '          ca_cert: ca.pem\n          password: Peap-Pass-4711\n';
      const { dir } = stick(config);
      execFileSync('mkfifo', [join(dir, 'ca.pem'), join(dir, 'admin.pw')]);
      const result = await runCli(['validate', dir]);
      expect(result.code).toBe(1);
      const lines = result.stdout.split('\n').filter((l) => l.includes('FIFO'));
      expect(lines).toEqual([
        expect.stringMatching(
          /mpprov\.yaml:6:20 +monitoring_points\[0\]\.password_file +file 'admin\.pw' is a FIFO \(named pipe\), not a regular file/,
        ),
        expect.stringMatching(
          /mpprov\.yaml:13:20 +monitoring_points\[0\]\.interfaces\.eth1\.dot1x\.ca_cert +file 'ca\.pem' is a FIFO \(named pipe\), not a regular file/,
        ),
      ]);
    },
  );

  it('a device node, a listening socket and a link to /dev/zero as ca_cert are refused unopened', async () => {
    const { dir } = stick(head);
    execFileSync('mknod', [join(dir, 'zero'), 'c', '1', '5']);
    symlinkSync('/dev/zero', join(dir, 'zero-link'));
    const socket = join(dir, 'ca.sock');
    const server = createServer();
    servers.push(server);
    await new Promise<void>((r) => server.listen(socket, r));
    expect(await readReferencedFile(dir, 'zero')).toMatchObject({
      ok: false,
      message: "file 'zero' is a device, not a regular file",
    });
    expect(await readReferencedFile(dir, 'ca.sock')).toMatchObject({
      ok: false,
      message: "file 'ca.sock' is a socket, not a regular file",
    });
    expect(await readReferencedFile(dir, 'zero-link')).toMatchObject({
      ok: false,
      message: "'zero-link' is a link that leads outside the configuration's folder",
    });
  });

  it('a folder linked out of the stick does not carry a path out with it', async () => {
    const { dir, outside } = stick(head);
    symlinkSync(join(outside, '..'), join(dir, 'certs'));
    expect(await readReferencedFile(dir, 'certs/outside.txt')).toMatchObject({
      ok: false,
      message: "'certs/outside.txt' is a link that leads outside the configuration's folder",
    });
  });

  it('a file over its cap is not read at all (its size is enough)', async () => {
    const { dir } = stick(head);
    execFileSync('truncate', ['-s', '1T', join(dir, 'huge.pem')]);
    expect(await readReferencedFile(dir, 'huge.pem')).toMatchObject({
      ok: false,
      message: "file 'huge.pem' is 1099511627776 bytes; the limit is 1 MiB",
      tooLarge: 1099511627776,
    });
  });
});

describe('the snapshot of a stick (what a daemon job reads)', () => {
  it('reads only what the configuration and signature list mention: a 100 TiB unreferenced file does not matter', async () => {
    const { dir } = stick(`${head}          ca_cert: certs/ca.pem\n`);
    mkdirSync(join(dir, 'certs'));
    writeFileSync(join(dir, 'certs', 'ca.pem'), 'PEM\n');
    writeFileSync(join(dir, 'mpprov.sha256'), `${'0'.repeat(64)}  extra/listed.txt\n`);
    mkdirSync(join(dir, 'extra'));
    writeFileSync(join(dir, 'extra', 'listed.txt'), 'listed\n');
    writeFileSync(join(dir, 'unmentioned.txt'), 'never read\n');
    execFileSync('truncate', ['-s', '100T', join(dir, 'backup.img')]);
    const copy = join(dir, '..', 'copy');
    const snapshot = await snapshotStick(dir, 'mpprov.yaml', copy);
    expect(snapshot.notes).toEqual([]);
    expect(readdirSync(copy).sort()).toEqual(['certs', 'extra', 'mpprov.sha256', 'mpprov.yaml']);
    expect(snapshot.files).toBe(4);
    expect(snapshot.bytesRead).toBe(
      Buffer.byteLength(`${head}          ca_cert: certs/ca.pem\n`) + 64 + 2 + 16 + 1 + 4 + 7,
    );
  });

  it(
    '100 000 empty files: the walk stops at its cap with a note, and nothing unmentioned is copied',
    { timeout: 120_000 },
    async () => {
      const { dir } = stick(`${head}          ca_cert: ca.pem\n`);
      writeFileSync(join(dir, 'ca.pem'), 'PEM\n');
      const many = join(dir, 'many');
      mkdirSync(many);
      for (let i = 0; i < 100_000; i++) writeFileSync(join(many, `f${i}`), '');
      const copy = join(dir, '..', 'copy');
      const snapshot = await snapshotStick(dir, 'mpprov.yaml', copy);
      expect(snapshot.notes).toEqual(['the stick holds more than 10000 files and folders: the rest was not looked at']);
      expect(
        readdirSync(copy)
          .filter((n) => n !== 'ca.pem')
          .sort(),
      ).toEqual(['mpprov.yaml']);
      expect(snapshot.files).toBeLessThanOrEqual(2);
    },
  );

  it('a FIFO named as ca_cert is reported by validation as a FIFO, not as missing from the copy', async () => {
    const { dir } = stick(`${head}          ca_cert: ca.pem\n          password: Peap-Pass-4711\n`);
    execFileSync('mkfifo', [join(dir, 'ca.pem')]);
    const snapshot = await snapshotStick(dir, 'mpprov.yaml', join(dir, '..', 'copy'));
    expect(snapshot.notes).toEqual(['ca.pem is a FIFO (named pipe), not a regular file: not read']);
    const loaded = await loadStick(snapshot.configFile, {
      label: 'mpprov.yaml',
      reader: snapshotReader(fileStickReader, snapshot),
    });
    expect(
      loaded.problems
        .filter((p) => p.path.endsWith('ca_cert'))
        .map((p) => `${p.line}:${p.column} ${p.path} ${p.message}`),
    ).toEqual([
      "13:20 monitoring_points[0].interfaces.eth1.dot1x.ca_cert file 'ca.pem' is a FIFO (named pipe), not a regular file",
    ]);
  });

  it('a link out named by the configuration is neither copied nor quoted', async () => {
    const { dir, outside } = stick(`${head}          ca_cert: ca.pem\n`);
    symlinkSync(outside, join(dir, 'ca.pem'));
    const copy = join(dir, '..', 'copy');
    const snapshot = await snapshotStick(dir, 'mpprov.yaml', copy);
    expect(snapshot.notes).toEqual(['ca.pem is a link that leads outside the stick: not read']);
    expect(readdirSync(copy)).toEqual(['mpprov.yaml']);
    expect(snapshot.bytesRead).toBe(Buffer.byteLength(`${head}          ca_cert: ca.pem\n`));
    expect(MAX_CONFIG_BYTES).toBe(256 * 1024);
  });
});
