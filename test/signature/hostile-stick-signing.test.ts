import { execFileSync, spawnSync } from 'node:child_process';
import {
  copyFileSync,
  existsSync,
  linkSync,
  lstatSync,
  mkdirSync,
  readdirSync,
  readFileSync,
  readlinkSync,
  symlinkSync,
  writeFileSync,
} from 'node:fs';
import { join } from 'node:path';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { signStick } from '../../src/signature/index.js';
import { repoRoot, runCli } from '../support/run-cli.js';
import { tempFolder } from '../support/temp-folder.js';
import { PROFILE_FILES, useSigningRig } from './signing-rig.js';

/**
 * `mpprov sign` on a stick that plants something where mpprov.sha256, mpprov.sha256.sig or their
 * temporary files belong: a link to a file outside the stick, a FIFO, a folder, a second name of
 * the stick's mpprov.yaml, or a file of another filesystem mounted there. Each is refused with a
 * sentence naming it, before anything is written, and what was planted (and what it points at)
 * is left exactly as it was. The stick is a tmpfs (links and FIFOs need a filesystem that has
 * them; FAT has neither) and the "outside" files are on the test run's own disk, so a bind mount
 * puts a file of another filesystem into the stick's folder.
 */

const rig = useSigningRig();
const work = tempFolder('sign-hostile');
const tmpfs = join(work, 'tmpfs');
const outsideDir = join(work, 'outside');
const OUTSIDE_TEXT = "the signer's own notes\n";
const mounts: string[] = [];

function unmount(dir: string): void {
  if (spawnSync('mountpoint', ['-q', dir]).status === 0) execFileSync('umount', ['-l', dir]);
}

beforeAll(() => {
  mkdirSync(tmpfs);
  mkdirSync(outsideDir);
  execFileSync('mount', ['-t', 'tmpfs', '-o', 'size=16m', 'tmpfs', tmpfs]);
});
afterEach(() => {
  for (const dir of mounts.splice(0).reverse()) unmount(dir);
});
afterAll(() => unmount(tmpfs));

let count = 0;
/** A stick folder on the tmpfs holding profiles/eap-tls-pem.yaml and the files it names. */
function stick(): string {
  const root = join(tmpfs, `stick-${(count += 1)}`);
  mkdirSync(join(root, 'certs'), { recursive: true });
  mkdirSync(join(root, 'secrets'));
  copyFileSync(`${repoRoot}profiles/eap-tls-pem.yaml`, join(root, 'mpprov.yaml'));
  for (const file of PROFILE_FILES) copyFileSync(`${repoRoot}profiles/${file}`, join(root, file));
  return root;
}

/** A file on the run's own disk, outside every stick. */
function outsideFile(): string {
  const file = join(outsideDir, `notes-${(count += 1)}.txt`);
  writeFileSync(file, OUTSIDE_TEXT);
  return file;
}

const LINK = 'is a symbolic link, which mpprov never writes through: nothing was written';
const NOT_PLAIN =
  'is not a plain file (a FIFO, a device, a folder, a second name of another file, or a file mounted from another filesystem): nothing was written to it';
const HINT = 'remove it from the stick and sign again';

interface Plant {
  message: string;
  /** Puts the hostile thing at `file` in stick `root`; returns a check that it and its target are untouched. */
  make(root: string, file: string): () => void;
}

const PLANTS: Record<string, Plant> = {
  'a symbolic link to a file outside the stick': {
    message: LINK,
    make(_root, file) {
      const outside = outsideFile();
      symlinkSync(outside, file);
      return () => {
        expect(readlinkSync(file)).toBe(outside);
        expect(readFileSync(outside, 'utf8')).toBe(OUTSIDE_TEXT);
      };
    },
  },
  'a FIFO': {
    message: NOT_PLAIN,
    make(_root, file) {
      execFileSync('mkfifo', [file]);
      return () => expect(lstatSync(file).isFIFO()).toBe(true);
    },
  },
  'a folder': {
    message: NOT_PLAIN,
    make(_root, file) {
      mkdirSync(file);
      return () => expect(readdirSync(file)).toEqual([]);
    },
  },
  "a hard link to the stick's mpprov.yaml": {
    message: NOT_PLAIN,
    make(root, file) {
      const config = join(root, 'mpprov.yaml');
      const before = readFileSync(config);
      linkSync(config, file);
      return () => {
        expect(readFileSync(config)).toEqual(before);
        expect(lstatSync(file).ino).toBe(lstatSync(config).ino);
        expect(lstatSync(config).nlink).toBe(2);
      };
    },
  },
  'a file of another filesystem mounted there': {
    message: NOT_PLAIN,
    make(_root, file) {
      const outside = outsideFile();
      writeFileSync(file, '');
      execFileSync('mount', ['--bind', outside, file]);
      mounts.push(file);
      return () => {
        expect(spawnSync('mountpoint', ['-q', file]).status).toBe(0);
        expect(readFileSync(outside, 'utf8')).toBe(OUTSIDE_TEXT);
      };
    },
  },
};

const NAMES = ['mpprov.sha256', 'mpprov.sha256.sig', 'mpprov.sha256.tmp', 'mpprov.sha256.sig.tmp'];
const CASES = NAMES.flatMap((name) => Object.entries(PLANTS).map(([what, plant]) => ({ name, what, plant })));

const sign = (root: string) =>
  signStick(root, rig.keys.team, { configName: 'mpprov.yaml', referencedPaths: PROFILE_FILES });

describe('mpprov sign refuses what a stick plants where its files belong', () => {
  it('covers every file it writes and every kind of planted file', () => {
    expect(CASES).toHaveLength(20);
  });

  it.each(CASES)('$name as $what: refused, named, nothing written', async ({ name, plant }) => {
    const root = stick();
    const file = join(root, name);
    const untouched = plant.make(root, file);
    const before = readdirSync(root).sort();

    const outcome = await sign(root);

    expect(outcome).toEqual({
      ok: false,
      problems: [{ severity: 'error', file, line: 1, column: 1, path: '', message: plant.message, hint: HINT }],
    });
    untouched();
    // Nothing written anywhere: no list beside an old signature, no temporary file left.
    expect(readdirSync(root).sort()).toEqual(before);
  });

  it('a plain mpprov.sha256.tmp (a signing cut short) is removed and the stick is signed', async () => {
    const root = stick();
    writeFileSync(join(root, 'mpprov.sha256.tmp'), 'half a li');
    const outcome = await sign(root);
    expect(outcome.ok).toBe(true);
    expect(readdirSync(root).sort()).toEqual(['certs', 'mpprov.sha256', 'mpprov.sha256.sig', 'mpprov.yaml', 'secrets']);
  });

  it('the CLI says which file it refused and exits 1', async () => {
    const root = stick();
    const outside = outsideFile();
    const planted = join(root, 'mpprov.sha256.sig');
    symlinkSync(outside, planted);
    const result = await runCli(['sign', root, '--key', rig.keys.team]);
    expect(result.stdout).toBe(`${planted}:1:1  (file)  ${LINK}  (${HINT})\n${root}: not signed\n`);
    expect(result.code).toBe(1);
    expect(readFileSync(outside, 'utf8')).toBe(OUTSIDE_TEXT);
    expect(readlinkSync(planted)).toBe(outside);
    expect(existsSync(join(root, 'mpprov.sha256'))).toBe(false);
  });
});
