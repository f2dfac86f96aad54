import { type ChildProcess, execFile, spawn } from 'node:child_process';
import { closeSync, openSync } from 'node:fs';
import { mkdir, readdir, readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { afterEach, describe, expect, it } from 'vitest';
import { PEAP_PASSWORD, stickFiles } from '../support/stick-workspace.js';
import { allFiles, readJobs, waitFor, waitForJobEnds } from './agent-process.js';
import { useAgentRig } from './agent-rig.js';
import { makeFatImage, readFatFile } from './fat-stick.js';

/**
 * A stick mounted at a folder whose name is not UTF-8 (`ST\xffICK`: a label in another encoding
 * gives such bytes). The agent sees it in the mount table by its bytes; here the whole job must
 * happen there: read, applied, usb.log and the result files written on the stick, the stick
 * released, and every sentence showing the name escaped, never its raw byte. A real FAT image
 * through fusefat, `mpprov run` as a child process, the simulator as the device.
 */

const run = promisify(execFile);

/** The folder's name on disk: `ST`, the byte 0xFF, `ICK`. */
const NAME = Buffer.concat([Buffer.from('ST'), Buffer.from([0xff]), Buffer.from('ICK')]);
/** The same name as the agent shows it. */
const SHOWN = 'ST\\xffICK';
/** A shell argument that makes the byte (spawn's own arguments are UTF-8 text, which cannot hold it). */
const SHELL_PATH = '"$(printf "%s/ST\\377ICK" "$1")"';

interface ByteMount {
  exited: Promise<void>;
  mounted(): Promise<boolean>;
  unmount(): Promise<void>;
  /** A yank: fusefat killed, then the dead mount detached. */
  pull(): Promise<void>;
}

/** fusefat mounting `image` at `<media>/ST\xffICK`, as fat-stick.ts's mountFat does at a text path. */
async function mountAtBytes(image: string, media: string, logFile: string): Promise<ByteMount> {
  const bytes = Buffer.concat([Buffer.from(`${media}/`), NAME]);
  // Mounted there again after a pull: the folder is still there.
  await mkdir(bytes, { recursive: true });
  const log = openSync(logFile, 'a');
  let child: ChildProcess;
  try {
    child = spawn('sh', ['-c', `exec fusefat -f -o rw+ "$2" ${SHELL_PATH}`, 'sh', media, image], {
      stdio: ['ignore', log, log],
    });
  } finally {
    closeSync(log);
  }
  let gone = false;
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  void exited.then(() => (gone = true));
  // mountinfo escapes only space, tab, newline and backslash: the byte is there as it is.
  const mounted = async (): Promise<boolean> =>
    (await readFile('/proc/self/mountinfo')).includes(Buffer.concat([Buffer.from(' '), bytes, Buffer.from(' ')]));
  const end = Date.now() + 10_000;
  while (!(await mounted())) {
    if (gone || Date.now() > end)
      throw new Error(`fusefat did not mount ${image}: ${(await readFile(logFile, 'utf8')).slice(-500)}`);
    await new Promise((r) => setTimeout(r, 25));
  }
  return {
    exited,
    mounted,
    async unmount() {
      if (gone) return;
      await run('sh', ['-c', `fusermount -u ${SHELL_PATH} || fusermount -u -z ${SHELL_PATH}`, 'sh', media]).catch(
        () => undefined,
      );
      await exited;
    },
    async pull() {
      if (gone) return;
      child.kill('SIGKILL');
      await exited;
      await run('sh', ['-c', `fusermount -u -z ${SHELL_PATH}`, 'sh', media]).catch(() => undefined);
    },
  };
}

describe('mpprov run with a stick mounted at a folder whose name is not UTF-8', () => {
  const rig = useAgentRig();
  let stick: ByteMount | undefined;
  // Registered after the rig's: runs before it (hooks unwind as a stack), so the stick is
  // unmounted before the world holding its mount folder is removed.
  afterEach(async () => {
    await stick?.unmount();
    stick = undefined;
  });

  it(
    'runs the job to its RESULT, writes usb.log and the result files there, releases the stick, and shows the name escaped',
    { timeout: 90_000 },
    async () => {
      const sim = await rig.simulator({ restartMs: 300 });
      const world = await rig.makeWorld();
      // The agent's temporary folder is the test's: what the agent leaves there is seen.
      const tmp = join(world.dir, 'tmp');
      await mkdir(tmp);
      const agent = await rig.startAgent(world, { TMPDIR: tmp });
      const image = join(world.dir, 'stick.img');
      await makeFatImage(image, 'STICK', stickFiles([{ name: 'mp1', sim, dot1x: true }]));
      stick = await mountAtBytes(image, world.mediaRoot, join(world.dir, 'fusefat.log'));
      const shownRoot = `${world.mediaRoot}/${SHOWN}`;

      const [end] = await waitForJobEnds(world, 1, agent, 40_000);
      expect(end?.result, await agent.output()).toBe('CHANGED');
      const id = end?.id ?? 'no id';
      // Released by the agent, not by the test: fusefat exits on its own.
      await waitFor(
        async () => !(await stick?.mounted()),
        10_000,
        'the agent to unmount the stick',
        () => agent.output(),
      );
      await stick.exited;
      const output = await agent.output();
      expect(output).toContain(`the stick at ${shownRoot} is released (fusermount -u): safe to remove`);

      // The journal: the name escaped, never the raw byte (which text shows as U+FFFD).
      expect(output).toContain(`job started: stick ${SHOWN} at ${shownRoot}, mpprov.yaml sha256 `);
      expect(output).not.toContain('\ufffd');
      // The link the agent wrote and unmounted through is its own business, and gone with the job.
      expect(output).not.toContain('mpprov-folder-');
      expect(await readdir(tmp)).toEqual([]);

      const usbLog = (await readFatFile(image, 'usb.log')) ?? '';
      expect(usbLog).toContain(`======== mpprov job ${id} ========`);
      expect(usbLog).toContain(`stick:   ${SHOWN} (${shownRoot})`);
      expect(usbLog).toContain('[mp1] step 3/4: restart networking');
      expect(usbLog.trimEnd().split('\n').at(-1)).toBe(
        `RESULT: CHANGED  mp1: changed, 802.1X authorization of eth1 inet not visible through the Admin API (check the switch port)  [${id}]`,
      );
      expect(usbLog).not.toContain('the job is still running');
      const result = JSON.parse((await readFatFile(image, 'mpprov-result.json')) ?? '{}') as Record<string, unknown>;
      expect(result).toMatchObject({
        job: id,
        result: 'CHANGED',
        source: { kind: 'stick', label: SHOWN, config: 'mpprov.yaml' },
      });
      expect(await readFatFile(image, 'MPPROV-OK.TXT')).toContain(`(stick ${SHOWN}, mpprov.yaml, job ${id})`);
      expect((await readJobs(world.stateDir)).find((r) => r.event === 'end')?.stick_log).toBe('complete');

      const outputs = new Map<string, Buffer>([
        ['usb.log', Buffer.from(usbLog)],
        ['mpprov-result.json', Buffer.from(JSON.stringify(result))],
        ['agent output', Buffer.from(output)],
        ...(await allFiles(world.stateDir)),
      ]);
      expect([...outputs.keys()].some((k) => k.endsWith(`${id}.log`))).toBe(true);
      for (const [name, content] of outputs) {
        for (const secret of [sim.password, PEAP_PASSWORD])
          expect(content.includes(secret), `${secret} in ${name}`).toBe(false);
      }
    },
  );

  it(
    'pulled mid-job and inserted again at the same folder: the job writes the rest there, as at a UTF-8 folder',
    { timeout: 90_000 },
    async () => {
      // A restart long enough for the stick to go out and in again meanwhile.
      const sim = await rig.simulator({ restartMs: 6000 });
      const world = await rig.makeWorld();
      const tmp = join(world.dir, 'tmp');
      await mkdir(tmp);
      const agent = await rig.startAgent(world, { TMPDIR: tmp });
      const output = (): Promise<string> => agent.output();
      const image = join(world.dir, 'stick.img');
      const fuseLog = join(world.dir, 'fusefat.log');
      await makeFatImage(image, 'STICK', stickFiles([{ name: 'mp1', sim }]));
      stick = await mountAtBytes(image, world.mediaRoot, fuseLog);
      const shownRoot = `${world.mediaRoot}/${SHOWN}`;
      await waitFor(
        async () => (await output()).includes('the device is not answering yet'),
        20_000,
        'the wait for the restarting device',
        output,
      );
      // Let the writer put the restart's lines on the stick, then yank it.
      await new Promise((r) => setTimeout(r, 700));
      await stick.pull();
      await waitFor(
        async () => (await output()).includes(`the stick at ${shownRoot} was unmounted; the job goes on from its copy`),
        10_000,
        'the agent to see the stick go',
        output,
      );
      expect(await readJobs(world.stateDir).then((jobs) => jobs.filter((j) => j.event === 'end'))).toEqual([]);

      // The same stick at the same folder: the running job's writer finds it again through its link.
      stick = await mountAtBytes(image, world.mediaRoot, fuseLog);
      const [end] = await waitForJobEnds(world, 1, agent, 40_000);
      expect(end?.result, await output()).toBe('CHANGED');
      expect(end?.stick_log).toBe('complete');
      await waitFor(async () => !(await stick?.mounted()), 10_000, 'the agent to unmount the stick', output);
      await stick.exited;
      expect(await output()).toContain(
        `stick at ${shownRoot}: the same configuration is already being applied by this job; not started twice`,
      );
      expect((await readJobs(world.stateDir)).filter((j) => j.event === 'start')).toHaveLength(1);
      expect(await readdir(tmp)).toEqual([]);

      const usbLog = (await readFatFile(image, 'usb.log')) ?? '';
      expect(usbLog).toContain('[mp1] step 3/4: restart networking');
      expect(usbLog.trimEnd().split('\n').at(-1)).toBe(`RESULT: CHANGED  mp1: changed and verified  [${end?.id}]`);
      expect(usbLog).not.toContain('the job is still running');
      expect(await readFatFile(image, 'MPPROV-OK.TXT')).toContain(`(stick ${SHOWN}, mpprov.yaml, job ${end?.id})`);
    },
  );

  it(
    'a stick whose job ended the previous run is refused there, on its usb.log and in the journal',
    { timeout: 90_000 },
    async () => {
      const sim = await rig.simulator({ restartMs: 8000 });
      const world = await rig.makeWorld();
      const tmp = join(world.dir, 'tmp');
      await mkdir(tmp);
      const first = await rig.startAgent(world, { TMPDIR: tmp });
      const image = join(world.dir, 'stick.img');
      await makeFatImage(image, 'STICK', stickFiles([{ name: 'mp1', sim }]));
      stick = await mountAtBytes(image, world.mediaRoot, join(world.dir, 'fusefat.log'));
      await waitFor(
        () => sim.state().phase === 'restarting',
        20_000,
        'the job to restart the device',
        () => first.output(),
      );
      expect((await first.stop('SIGKILL')).signal).toBe('SIGKILL');
      // The killed agent's link to the stick's folder: nothing removes it but the temporary folder's own cleaning.
      expect(await readdir(tmp)).toHaveLength(1);

      const second = await rig.startAgent(world, { TMPDIR: tmp });
      const output = (): Promise<string> => second.output();
      await waitFor(async () => (await output()).includes('this stick is not started'), 15_000, 'the refusal', output);
      const journal = await output();
      expect(journal).toContain(`stick at ${world.mediaRoot}/${SHOWN}: this stick is not started: its job j`);
      expect((await second.stop('SIGTERM')).code).toBe(0);
      // The refusal's own link is gone: only the killed agent's is left.
      expect(await readdir(tmp)).toHaveLength(1);
      await stick.unmount();
      const usbLog = (await readFatFile(image, 'usb.log')) ?? '';
      expect(usbLog, journal).toContain('this stick is not started: its job j');
      expect(usbLog).toContain('check it with mpprov validate');
    },
  );
});
