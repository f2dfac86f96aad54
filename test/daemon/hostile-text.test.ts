import { readFile } from 'node:fs/promises';
import { createServer } from 'node:net';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { expectNoRawControls, resultLines } from '../report/visible-output.js';
import { runCli } from '../support/run-cli.js';
import { stickFiles } from '../support/stick-workspace.js';
import { waitForJobEnds } from './agent-process.js';
import { useAgentRig } from './agent-rig.js';
import { makeFatImage, readFatFile } from './fat-stick.js';

/**
 * `mpprov run` with a real FAT stick mounted under a folder whose name (the label the agent shows)
 * holds a carriage return, a forged RESULT line and ESC, and whose mpprov.yaml names one device to retitle
 * the terminal and another, unreachable one to forge a RESULT line. usb.log, the result files, the
 * local job log, the agent's own output and the status page hold no raw control character, and
 * each has only the RESULT line its writer wrote.
 */

// Without a newline or a space: fusefat refuses a mount folder with a newline in its name, and the
// rig finds its mount in mountinfo, which writes a space as \040.
const LABEL = 'MP\rRESULT:CHANGED-label\x1b[31m\u202e';
const TITLE_NAME_YAML = '"mp\\e]0;owned\\a\\e[2K\\r\\u202etitle"';
const TITLE_NAME = 'mp\x1b]0;owned\x07\x1b[2K\r\u202etitle';
const FORGE_NAME_YAML = '"forge\\nRESULT: CHANGED  forge"';
const FORGE_NAME = 'forge\nRESULT: CHANGED  forge';

/** A loopback port nothing listens on: taken from the kernel, then released. */
async function closedPort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const address = server.address();
  if (address === null || typeof address === 'string') throw new Error('the probe server has no TCP address');
  await new Promise<void>((resolve, reject) => server.close((err) => (err === undefined ? resolve() : reject(err))));
  return address.port;
}

/** The lines the writer of RESULT lines wrote in the agent's output: `... [job] RESULT: ...`. */
const agentResultLines = (output: string): string[] => output.split('\n').filter((line) => / RESULT: /.test(line));

describe('mpprov run with hostile names and a hostile stick label', () => {
  const rig = useAgentRig();

  it('writes every output with the text escaped and one RESULT line each', { timeout: 90_000 }, async () => {
    const sim = await rig.simulator({ restartMs: 300 });
    const world = await rig.makeWorld({
      agentYaml: ({ mediaRoot, stateDir }) =>
        `version: 1\nmedia_roots: [${mediaRoot}]\nstate_dir: ${stateDir}\nlog_level: debug\n` +
        // No boot window: the device that cannot be reached is that at once, not after 120 s.
        `timeouts: { request_s: 5, restart_s: 30, connect_s: 0 }\nstatus_page: { listen: "127.0.0.1:0" }\n`,
    });
    const agent = await rig.startAgent(world);
    const page = /status page at (http:\/\/127\.0\.0\.1:\d+\/)/.exec(await agent.output())?.[1];
    expect(page, await agent.output()).toBeDefined();

    const files = stickFiles([
      { name: 'mpa', sim },
      { name: 'mpb', sim },
    ]);
    const yaml = files['mpprov.yaml'] as string;
    files['mpprov.yaml'] = yaml
      .replace('name: mpa', `name: ${TITLE_NAME_YAML}`)
      .replace(
        `name: mpb\n    url: ${sim.url}`,
        `name: ${FORGE_NAME_YAML}\n    url: https://127.0.0.1:${await closedPort()}`,
      );
    expect(files['mpprov.yaml']).not.toBe(yaml);
    const image = join(world.dir, 'hostile.img');
    await makeFatImage(image, 'HOSTILE', files);
    const stick = await rig.mount(image, join(world.mediaRoot, LABEL), { logFile: join(world.dir, 'fuse.log') });

    const [end] = await waitForJobEnds(world, 1, agent, 60_000);
    const id = end?.id ?? '';
    expect(end?.result, await agent.output()).toBe('FAILED');

    // The status page while the agent still runs: the job's status and its log, as the page loads them.
    const status = await (await fetch(`${page ?? ''}status.json`)).text();
    expectNoRawControls(status, 'the status page status.json');
    expect(status).toContain('MP\\\\rRESULT:CHANGED-label\\\\x1b[31m\\\\u202e');
    const pageLog = await (await fetch(`${page ?? ''}jobs/${id}/log`)).text();
    expectNoRawControls(pageLog, 'the status page log');
    expect(resultLines(pageLog)).toHaveLength(1);
    await stick.unmount();
    await agent.stop();

    const usbLog = (await readFatFile(image, 'usb.log')) ?? '';
    expectNoRawControls(usbLog, 'usb.log');
    expect(resultLines(usbLog)).toEqual([
      `RESULT: FAILED  mp\\x1b]0;owned\\x07\\x1b[2K\\r\\u202etitle: changed and verified; forge\\nRESULT: CHANGED  forge: failed, cannot be reached  [${id}]`,
    ]);
    expect(usbLog).toContain(`stick:   MP\\rRESULT:CHANGED-label\\x1b[31m\\u202e (`);

    const local = await readFile(join(world.stateDir, 'logs', `${id}.log`), 'utf8');
    expectNoRawControls(local, 'the local job log');
    expect(resultLines(local)).toEqual(resultLines(usbLog));

    const txt = (await readFatFile(image, 'MPPROV-FAILED.TXT')) ?? '';
    expect(txt).toContain('forge\\nRESULT: CHANGED  forge: failed, cannot be reached');
    expectNoRawControls(txt, 'MPPROV-FAILED.TXT', { crlf: true });

    const json = (await readFatFile(image, 'mpprov-result.json')) ?? '';
    expectNoRawControls(json, 'mpprov-result.json');
    const result = JSON.parse(json) as { source: { label: string }; devices: { device: string }[] };
    expect(result.source.label).toBe(LABEL);
    expect(result.devices.map((d) => d.device)).toEqual([TITLE_NAME, FORGE_NAME]);

    // mpprov status lays out the same job from the state folder.
    const statusText = await runCli(['status', '--state-dir', world.stateDir]);
    expect(statusText.code, statusText.stderr).toBe(0);
    expectNoRawControls(statusText.stdout, 'mpprov status');
    expect(statusText.stdout).toContain('forge\\nRESULT: CHANGED  forge');
    const statusJson = await runCli(['status', '--state-dir', world.stateDir, '--json']);
    expectNoRawControls(statusJson.stdout, 'mpprov status --json');
    // The summary is the RESULT line's text (escaped there), JSON-encoded here.
    expect(statusJson.stdout).toContain('forge\\\\nRESULT: CHANGED  forge');
    expect(() => JSON.parse(statusJson.stdout) as unknown).not.toThrow();

    const output = await agent.output();
    expectNoRawControls(output, "the agent's output");
    expect(resultLines(output)).toEqual([]);
    expect(agentResultLines(output)).toEqual([expect.stringContaining(`[${id}] RESULT: FAILED  mp\\x1b]0;owned`)]);
  });
});
