import { execFileSync } from 'node:child_process';
import { beforeAll, describe, expect, it } from 'vitest';
import { type HistoryLine, readJobs, waitFor } from './agent-process.js';
import { useAgentRig } from './agent-rig.js';
import { requireLoopTools, useLoopSticks } from './loop-stick.js';

/**
 * The remount loop at the level of the daemon: a stick unmounted and mounted again
 * within milliseconds, 500 times, each insertion waiting for the job of the one before (a stick
 * put back while its own job runs is that job, by design: stick-job.test.ts). Every insertion
 * must get exactly one job: counted in the state folder's history and on the stick itself.
 * The stick is an ext2 image on a loop device (loop-stick.ts says why not a tmpfs bind mount),
 * its configuration invalid, so each job is short and sends nothing. A third of the rounds hold
 * findmnt still across the remount (it then prints nothing: the kernel reuses the mount's ID and
 * device number, and the agent may have read the table between the two), another third the whole
 * agent too (a loaded machine: every event reaches it only after both changes), as the watcher's
 * own test does without the daemon (test/ingest/fast-remount.test.ts).
 */

const REMOUNTS = 500;
const HOLD = ['nothing', 'findmnt', 'the agent and findmnt'] as const;

describe('mpprov run: a stick unmounted and mounted again within milliseconds', () => {
  const rig = useAgentRig({ fatSticks: false });
  const loopStick = useLoopSticks();
  beforeAll(() => requireLoopTools());

  it(`every insertion gets exactly one job (${REMOUNTS} remounts)`, { timeout: 600_000 }, async () => {
    const world = await rig.makeWorld({
      // The test unmounts the stick itself; info keeps 500 jobs' output small.
      agentYaml: ({ mediaRoot, stateDir }) =>
        `version: 1\nmedia_roots: [${mediaRoot}]\nstate_dir: ${stateDir}\nlog_level: info\nwhen_done: { eject: false }\n`,
    });
    const agent = await rig.startAgent(world);
    const agentPid = agent.child.pid ?? 0;
    const findmnt = execFileSync('pgrep', ['-P', String(agentPid), '-x', 'findmnt'], { encoding: 'utf8' }).trim();
    expect(findmnt).toMatch(/^\d+$/);
    const stick = loopStick(world, 'REMOUNT', { 'mpprov.yaml': 'version: 2\n' });

    let history: HistoryLine[] = [];
    const jobsAfter = async (insertions: number): Promise<void> => {
      await waitFor(
        async () => {
          history = await readJobs(world.stateDir);
          return history.filter((r) => r.event === 'end').length >= insertions;
        },
        30_000,
        `the job of insertion ${insertions}`,
        agent.output,
        agent.exited,
      );
      // A second job for one insertion starts with the first: by now it would show.
      expect(history.filter((r) => r.event === 'start').length, `jobs started after insertion ${insertions}`).toBe(
        insertions,
      );
    };

    const started = Date.now();
    stick.insert();
    await jobsAfter(1);
    const gapsUs: number[] = [];
    for (let round = 0; round < REMOUNTS; round++) {
      const hold = HOLD[round % HOLD.length];
      const held = hold === 'nothing' ? '' : hold === 'findmnt' ? findmnt : `${findmnt} ${agentPid}`;
      // One shell: the unmount, then the mount at once; the span printed is from the unmount's
      // end to the mount's (bash's clock, no process of its own): how long the stick was out.
      const script = [
        held === '' ? ':' : `kill -STOP ${held}`,
        `umount ${stick.mountPoint}`,
        's=$?',
        'a=$EPOCHREALTIME',
        `[ $s = 0 ] && ${stick.mountCommand}`,
        's=$?',
        'b=$EPOCHREALTIME',
        held === '' ? ':' : `kill -CONT ${held}`,
        'echo $(( ${b/./} - ${a/./} ))',
        'exit $s',
      ].join('; ');
      gapsUs.push(Number(execFileSync('bash', ['-c', script], { encoding: 'utf8' }).trim()));
      await jobsAfter(round + 2);
    }
    const elapsed = Date.now() - started;
    // Nothing late or doubled after the last round (the watcher looks at a root again for 500 ms).
    await new Promise((r) => setTimeout(r, 1500));
    history = await readJobs(world.stateDir);
    const insertions = REMOUNTS + 1;
    const starts = history.filter((r) => r.event === 'start');
    const ends = history.filter((r) => r.event === 'end');
    expect(starts).toHaveLength(insertions);
    expect(ends).toHaveLength(insertions);
    expect(new Set(starts.map((s) => s.id)).size).toBe(insertions);
    expect(ends.map((e) => e.id).sort()).toEqual(starts.map((s) => s.id).sort());
    expect(new Set(ends.map((e) => `${e.result} ${e.stick_log}`))).toEqual(new Set(['FAILED complete']));

    // The stick tells the same story: one section and one RESULT line per insertion, in order.
    const usbLog = stick.read('usb.log') ?? '';
    const sections = [...usbLog.matchAll(/^======== mpprov job (\S+) ========$/gm)].map((m) => m[1]);
    expect(sections).toEqual(starts.map((s) => s.id));
    expect(usbLog.match(/^RESULT: FAILED {2}mpprov\.yaml is invalid/gm)).toHaveLength(insertions);
    expect(await agent.output()).not.toMatch(/internal error|cannot look at the stick/);

    const sorted = [...gapsUs].sort((a, b) => a - b);
    const ms = (us: number | undefined): string => ((us ?? 0) / 1000).toFixed(1);
    console.log(
      `${REMOUNTS} remounts in ${(elapsed / 1000).toFixed(1)} s (${(elapsed / insertions).toFixed(0)} ms per insertion and job); ` +
        `unmount-to-mount span: median ${ms(sorted[sorted.length >> 1])} ms, 95th ${ms(sorted[Math.floor(sorted.length * 0.95)])} ms, max ${ms(sorted.at(-1))} ms`,
    );
    expect((await agent.stop()).code).toBe(0);
  });
});
