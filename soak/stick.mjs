// The soak's sticks: the repository's profiles pointed at the simulated device, as files for a
// tmpfs stick or a FAT image, and what a stick says when its job is over.
import { execFile } from 'node:child_process';
import { mkdir, readdir, readFile, rm, writeFile } from 'node:fs/promises';
import { dirname, join } from 'node:path';
import { promisify } from 'node:util';
import { mountFat, repoRoot } from '../bench/daemon-lib.mjs';

const run = promisify(execFile);
const mtoolsEnv = { ...process.env, MTOOLS_SKIP_CHECK: '1' };
export const profilesDir = join(repoRoot, 'profiles');

/** The simulator options that let the profiles reach it unchanged but for the URL (as test/support/stick-workspace.ts PROFILE_DEVICE). */
export async function profileDevice() {
  return {
    password: (await readFile(join(profilesDir, 'secrets/admin.pw'), 'utf8')).trim(),
    certificatePem: await readFile(join(profilesDir, 'certs/device-https-cert.pem'), 'utf8'),
    privateKeyPem: await readFile(join(profilesDir, 'certs/device-https-key.pem'), 'utf8'),
    // Short outages keep a cycle fast; the restart itself is still exercised.
    restartMs: 100,
    serviceRateLimit: false,
  };
}

/**
 * A profile as the files of a stick: mpprov.yaml pointed at `url` (edited by `edit`), and only the
 * certificate and secret files it names (a FAT image gets one mcopy per file, so fewer is faster).
 */
export async function profileStick(profile, url, edit = (t) => t) {
  const text = edit((await readFile(join(profilesDir, profile), 'utf8')).replace('https://192.0.2.10', url));
  const files = { 'mpprov.yaml': text };
  for (const match of text.matchAll(/\b((?:certs|secrets)\/[\w.-]+)/g))
    files[match[1]] = await readFile(join(profilesDir, match[1]));
  return files;
}

const RESULT_FILE = /^MPPROV-(OK|NO-CHANGE|FAILED)\.TXT$/i;
const WORD = { OK: 'CHANGED', 'NO-CHANGE': 'NO CHANGE', FAILED: 'FAILED' };

/** What a stick says about its job: result file names, the word of the one there, its text, usb.log's RESULT line. */
function readResult(names, resultText, usbLog) {
  const results = names.filter((n) => RESULT_FILE.test(n));
  const word = results.length === 1 ? WORD[RESULT_FILE.exec(results[0])[1].toUpperCase()] : undefined;
  const resultLine = (usbLog ?? '').trimEnd().split('\n').at(-1) ?? '';
  return {
    resultFiles: results,
    word,
    text: resultText ?? '',
    resultLine,
    busy: names.some((n) => /^MPPROV-BUSY\.TXT$/i.test(n)),
  };
}

/** Runs a command for its effect; its output is not wanted. */
async function run_(cmd, args) {
  await run(cmd, args);
}

/**
 * A tmpfs stick: the files are written into a tmpfs mounted outside the media root, which is then
 * bind-mounted under it, so the agent never sees a half-written stick. After the "removal" (the
 * bind unmounted) the tmpfs still holds what the agent wrote, read before it is unmounted too.
 */
export async function insertTmpfsStick(stage, mountPoint, files) {
  await mkdir(stage, { recursive: true });
  await mkdir(mountPoint, { recursive: true });
  await run_('mount', ['-t', 'tmpfs', '-o', 'size=4m,mode=0755', 'tmpfs', stage]);
  for (const [path, content] of Object.entries(files)) {
    await mkdir(dirname(join(stage, path)), { recursive: true });
    await writeFile(join(stage, path), content);
  }
  await run_('mount', ['--bind', stage, mountPoint]);
  return {
    kind: 'tmpfs',
    /** When the mount command returned: the stick is in the mount table (the bench's mount-to-first-request). */
    mountedAt: Date.now(),
    names: () => readdir(mountPoint).catch(() => []),
    async unmount() {
      await run_('umount', [mountPoint]);
    },
    async result() {
      const names = await readdir(stage);
      const resultName = names.find((n) => RESULT_FILE.test(n));
      const text = resultName === undefined ? undefined : await readFile(join(stage, resultName), 'utf8');
      return readResult(names, text, await readFile(join(stage, 'usb.log'), 'utf8').catch(() => undefined));
    },
    async dispose() {
      // A job still running (a hang the soak reports) may hold files open: detach it then.
      await run_('umount', [stage]).catch(() => run_('umount', ['-l', stage]));
      await rm(stage, { recursive: true, force: true });
    },
  };
}

/** A FAT image mounted with fusefat (bench/daemon-lib.mjs), read with mtools after its unmount. */
export async function insertFatStick(image, mountPoint, fuseLog, files, makeFatImage) {
  await makeFatImage(image, 'SOAKFAT', files);
  const stick = await mountFat(image, mountPoint, fuseLog);
  return {
    kind: 'fat',
    names: () => readdir(mountPoint).catch(() => []),
    unmount: () => stick.unmount(),
    async result() {
      const { stdout } = await run('mdir', ['-i', image, '-b', '::'], { env: mtoolsEnv, encoding: 'utf8' });
      const names = stdout
        .split('\n')
        .filter((l) => l.startsWith('::/'))
        .map((l) => l.slice(3));
      const type = (name) =>
        run('mtype', ['-i', image, `::${name}`], { env: mtoolsEnv, encoding: 'utf8', maxBuffer: 64 << 20 }).then(
          (r) => r.stdout,
          () => undefined,
        );
      const resultName = names.find((n) => RESULT_FILE.test(n));
      return readResult(names, resultName === undefined ? undefined : await type(resultName), await type('usb.log'));
    },
    async dispose() {
      await rm(image, { force: true });
      await rm(fuseLog, { force: true });
    },
  };
}

export const isResultFile = (name) => RESULT_FILE.test(name);
