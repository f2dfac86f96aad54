import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { activeEth1 } from '../support/device-observations.js';
import { PEAP_PASSWORD, stickFiles } from '../support/stick-workspace.js';
import { allFiles, readJobs, waitFor, waitForJobEnds } from './agent-process.js';
import { useAgentRig } from './agent-rig.js';
import { readFatFile } from './fat-stick.js';

describe('mpprov run with a real FAT stick', () => {
  const rig = useAgentRig();

  it(
    'configures the device, writes usb.log and mpprov-result.json on the stick, and leaks no secret',
    { timeout: 60_000 },
    async () => {
      const { sim, world, agent } = await rig.startWithDevice({ restartMs: 300 });
      const { image, stick } = await rig.insertStick(world, 'MPSTICK', stickFiles([{ name: 'mp1', sim, dot1x: true }]));

      const [end] = await waitForJobEnds(world, 1, agent);
      await stick.unmount();
      expect(end?.result, await agent.output()).toBe('CHANGED');

      // The device runs what the stick says.
      expect(activeEth1(sim)).toMatchObject({
        method: 'static',
        address: '192.0.2.10',
        netmask: '255.255.255.0',
        gateway: '192.0.2.1',
        wpa_eap: 'PEAP',
        wpa_identity: 'mp01@corp.example',
        wpa_password_set: true,
      });

      const usbLog = (await readFatFile(image, 'usb.log')) ?? '';
      const id = end?.id ?? '';
      expect(id).toMatch(/^j\d{8}-\d{6}-[0-9a-f]{4}$/);
      expect(usbLog).toContain(`======== mpprov job ${id} ========`);
      expect(usbLog).toMatch(/^time: {4}\d{4}-\d\d-\d\d \d\d:\d\d:\d\d [+-]\d{4}$/m);
      expect(usbLog).toMatch(/^agent: {3}mpprov \d+\.\d+\.\d+ on \S+$/m);
      expect(usbLog).toContain(`stick:   MPSTICK (${join(world.mediaRoot, 'MPSTICK')})`);
      expect(usbLog).toMatch(/^config: {2}mpprov\.yaml, sha256 [0-9a-f]{64}$/m);
      expect(usbLog).toContain('[mp1] step 3/4: restart networking');
      expect(usbLog).toMatch(/ warning: mpprov\.yaml:\d+:\d+ .*PEAP without ca_cert/);
      const body = usbLog.split('\n').filter((l) => /^\d\d:\d\d:\d\d\.\d{3} /.test(l));
      expect(body.length).toBeGreaterThan(5);
      for (const line of body) expect(line).toContain(`[${id}]`);
      // eth1 is static with 802.1X: its authorization cannot be seen through the Admin API, which
      // usb.log says as a warning and in the RESULT line, never "verified".
      expect(usbLog).toContain(
        '[mp1] warning: eth1 inet: applied; 802.1X authorization is not visible through the Admin API (a static address looks the same whether or not the switch port authorized it)',
      );
      expect(usbLog.trimEnd().split('\n').at(-1)).toBe(
        `RESULT: CHANGED  mp1: changed, 802.1X authorization of eth1 inet not visible through the Admin API (check the switch port)  [${id}]`,
      );

      const result = JSON.parse((await readFatFile(image, 'mpprov-result.json')) ?? '{}') as Record<string, unknown>;
      expect(result).toMatchObject({
        format: 1,
        job: id,
        result: 'CHANGED',
        source: { kind: 'stick', label: 'MPSTICK', config: 'mpprov.yaml' },
      });
      expect(result.devices).toEqual([expect.objectContaining({ device: 'mp1', url: sim.url, outcome: 'changed' })]);

      expect((await readJobs(world.stateDir)).find((r) => r.event === 'end')?.stick_log).toBe('complete');
      expect((await agent.stop()).code).toBe(0);

      // No secret anywhere: stick, local logs, state files, the agent's own output.
      const outputs = new Map<string, Buffer>([
        ['usb.log', Buffer.from(usbLog)],
        ['mpprov-result.json', Buffer.from(JSON.stringify(result))],
        ['agent output', Buffer.from(await agent.output())],
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
    'a broken stick: usb.log lists every problem with its place, and the device receives nothing',
    { timeout: 60_000 },
    async () => {
      const { sim, world, agent } = await rig.startWithDevice({ restartMs: 300 });
      const yaml = [
        'version: 1',
        'monitoring_points:',
        '  - name: mp1',
        `    url: ${sim.url}`,
        '    password_file: secrets/mp1.pw',
        `    tls: { fingerprint_sha256: "${sim.fingerprintSha256}" }`,
        '    interfaces:',
        '      eth1:',
        '        ipv4: { method: statc, address: 192.0.2.10/24 }',
        '        link: { mtu: 99999 }',
        '      eth2:',
        '        ipv4: { method: dhcp, gatway: 192.0.2.1 }',
        '',
      ].join('\n');
      const { image, stick } = await rig.insertStick(world, 'BROKEN', {
        'mpprov.yaml': yaml,
        'secrets/mp1.pw': `${sim.password}\n`,
      });
      const [end] = await waitForJobEnds(world, 1, agent);
      await stick.unmount();

      expect(end?.result).toBe('FAILED');
      expect(sim.requests()).toEqual([]);
      const usbLog = (await readFatFile(image, 'usb.log')) ?? '';
      const problems = usbLog
        .split('\n')
        .filter((l) => l.includes(' problem: '))
        .map((l) => l.replace(/^.*? problem: /, ''));
      expect(problems).toEqual([
        'mpprov.yaml:9:25  monitoring_points[0].interfaces.eth1.ipv4.method  "statc" is not one of: dhcp, static, manual  (did you mean \'static\'?)',
        'mpprov.yaml:10:22  monitoring_points[0].interfaces.eth1.link.mtu  must be at most 9000  (use 9000 or less)',
        "mpprov.yaml:12:31  monitoring_points[0].interfaces.eth2.ipv4.gatway  unknown key 'gatway'  (did you mean 'gateway'?)",
      ]);
      expect(usbLog).toContain('mpprov.yaml is INVALID (3 errors, 0 warnings): nothing was sent to any device');
      expect(usbLog.trimEnd().split('\n').at(-1)).toBe(
        `RESULT: FAILED  mpprov.yaml is invalid (3 errors), nothing was sent to any device  [${end?.id}]`,
      );
      const result = JSON.parse((await readFatFile(image, 'mpprov-result.json')) ?? '{}') as {
        result?: string;
        outcome?: string;
        problems?: unknown[];
      };
      expect(result).toMatchObject({ result: 'FAILED', outcome: 'invalid' });
      expect(result.problems).toHaveLength(3);
    },
  );

  it(
    'the same stick: not started twice while its job runs, and NO CHANGE without a restart when inserted again',
    { timeout: 90_000 },
    async () => {
      // A restart long enough for the stick to go out and in again meanwhile.
      const { sim, world, agent } = await rig.startWithDevice({ restartMs: 3000 });
      const inserted = await rig.insertStick(world, 'AGAIN', stickFiles([{ name: 'mp1', sim }]));
      const { image, mountPoint, fuseLog } = inserted;
      let stick = inserted.stick;
      const running = agent;
      await waitFor(
        async () => (await running.output()).includes('step 3/4: restart networking'),
        20_000,
        'the restart step',
        running.output,
      );

      // Out and in again while the device restarts: the job goes on, no second job starts.
      await stick.unmount();
      stick = await rig.mount(image, mountPoint, { logFile: fuseLog });
      await waitFor(
        async () => (await running.output()).includes('not started twice'),
        10_000,
        'the second insertion to be noticed',
        running.output,
      );
      const [first] = await waitForJobEnds(world, 1, agent);
      expect(first?.result).toBe('CHANGED');
      expect(first?.stick_log).toBe('complete');
      await stick.unmount();

      // Inserted again after the job: already applied, finished quickly, no restart.
      stick = await rig.mount(image, mountPoint, { logFile: fuseLog });
      const ends = await waitForJobEnds(world, 2, agent);
      await stick.unmount();
      expect(ends.map((e) => e.result)).toEqual(['CHANGED', 'NO CHANGE']);
      expect((await readJobs(world.stateDir)).filter((r) => r.event === 'start')).toHaveLength(2);
      expect(sim.state().restarts).toBe(1);

      const usbLog = (await readFatFile(image, 'usb.log')) ?? '';
      const sections = usbLog.split('======== mpprov job ').slice(1);
      expect(sections).toHaveLength(2);
      expect(sections[0]).toContain('[mp1] step 4/4 done');
      expect(sections[0]).toContain(`RESULT: CHANGED  mp1: changed and verified  [${first?.id}]`);
      expect(sections[1]).toContain('[mp1] already applied: the device matches the configuration');
      expect(usbLog.trimEnd().split('\n').at(-1)).toBe(
        `RESULT: NO CHANGE  mp1: already applied, no restart  [${ends[1]?.id}]`,
      );
    },
  );

  it(
    'without findmnt the agent re-reads the mount table once a second, and still finds the stick',
    { timeout: 60_000 },
    async () => {
      const world = await rig.makeWorld();
      const agent = await rig.startAgent(world, { MPPROV_FINDMNT: join(world.dir, 'no-findmnt-here') });
      expect(await agent.output()).toContain('(polling)');
      expect(await agent.output()).toMatch(
        /no-findmnt-here is not installed: re-reading \/proc\/self\/mountinfo every 1000 ms instead/,
      );
      const { image, stick } = await rig.insertStick(world, 'POLLED', { 'mpprov.yml': 'version: 2\n' });
      const [end] = await waitForJobEnds(world, 1, agent);
      await stick.unmount();
      expect(end?.result).toBe('FAILED');
      // mpprov.yml is an 8.3 name: fusefat lists it as MPPROV.YML, the job still calls it by its name.
      expect((await readFatFile(image, 'usb.log')) ?? '').toMatch(/problem: mpprov\.yml:1:10 {2}version {2}/);
    },
  );
});
