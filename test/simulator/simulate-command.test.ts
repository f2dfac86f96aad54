import { readFile, stat, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { Agent, request } from 'undici';
import { describe, expect, it } from 'vitest';
import { useProcesses } from '../support/run-cli.js';
import { tempFolder } from '../support/temp-folder.js';

/**
 * `mpprov simulate` as a real process, built into dist/ (vitest's global setup builds it): it
 * prints how to reach the device, serves it, and stops cleanly on SIGINT and SIGTERM.
 */

const dir = tempFolder('sim-cli');
const processes = useProcesses();

/** `mpprov simulate ARGS`, once it printed its first line (or ended); `exited` gives the exit status. */
async function simulate(args: string[]) {
  const started = await processes.startCli(['simulate', ...args]);
  return { ...started, exited: started.exited.then((exit) => exit.code) };
}

const insecure = new Agent({ connect: { rejectUnauthorized: false } });

describe('mpprov simulate', () => {
  it('prints one JSON line with URL, credentials and fingerprint, serves the device, and stops on SIGTERM', async () => {
    const { child, firstLine, exited } = await simulate(['--json', '--password', 'pw-123', '--restart-ms', '100']);
    const info = JSON.parse(firstLine) as Record<string, string>;
    expect(info).toMatchObject({ username: 'admin', password: 'pw-123', model: 'm50' });
    expect(info['url']).toMatch(/^https:\/\/127\.0\.0\.1:\d+$/);
    expect(info['api_url']).toBe(`${info['url']}/api/v1`);
    expect(info['fingerprint_sha256']).toMatch(/^([0-9A-F]{2}:){31}[0-9A-F]{2}$/);
    const pinned = new Agent({ connect: { rejectUnauthorized: false } });
    const res = await request(`${info['api_url']}/appliance/capability`, {
      dispatcher: pinned,
      headers: { authorization: `Basic ${Buffer.from('admin:pw-123').toString('base64')}` },
    });
    expect(res.statusCode).toBe(200);
    await res.body.dump();
    await pinned.close();
    const state = await request(`${info['control_url']}/state`);
    expect(((await state.body.json()) as { state: { fingerprint_sha256: string } }).state.fingerprint_sha256).toBe(
      info['fingerprint_sha256'],
    );
    child.kill('SIGTERM');
    expect(await exited).toBe(0);
  });

  it('shows dot1x_state in GET /interface/ only with --show-dot1x-state, and says which view it serves', async () => {
    const activeView = async (info: Record<string, unknown>) => {
      const res = await request(`${String(info['api_url'])}/interface/eth0/?config_state=active`, {
        dispatcher: insecure,
        headers: { authorization: `Basic ${Buffer.from(`admin:${String(info['password'])}`).toString('base64')}` },
      });
      return ((await res.body.json()) as { interface: Record<string, unknown> }).interface;
    };
    const plain = await simulate(['--json']);
    const plainInfo = JSON.parse(plain.firstLine) as Record<string, unknown>;
    expect(plainInfo['show_dot1x_state']).toBe(false);
    expect(await activeView(plainInfo)).not.toHaveProperty('dot1x_state');
    plain.child.kill('SIGTERM');
    expect(await plain.exited).toBe(0);

    const shown = await simulate(['--json', '--show-dot1x-state']);
    const shownInfo = JSON.parse(shown.firstLine) as Record<string, unknown>;
    expect(shownInfo['show_dot1x_state']).toBe(true);
    expect(await activeView(shownInfo)).toMatchObject({ name: 'eth0', dot1x_state: 'disabled' });
    shown.child.kill('SIGTERM');
    expect(await shown.exited).toBe(0);

    const text = await simulate(['--show-dot1x-state']);
    text.child.kill('SIGINT');
    expect(await text.exited).toBe(0);
    expect(text.stdout()).toContain(
      "  API view:     the model's view plus dot1x_state in GET /interface/ (a rehearsal aid; a real device has no such field)\n",
    );
  });

  it('prints text by default and stops on SIGINT', async () => {
    const { child, exited, stdout } = await simulate(['--password', 'pw-text']);
    child.kill('SIGINT');
    expect(await exited).toBe(0);
    const text = stdout();
    expect(text).toContain('  password:     pw-text\n');
    expect(text).toMatch(/ {2}fingerprint: {2}([0-9A-F]{2}:){31}[0-9A-F]{2}\n/);
    expect(text).toContain(
      "  API view:     exactly the model's view (--show-dot1x-state adds dot1x_state, a rehearsal aid)\n",
    );
  });

  it('applies --switch, --fault and --model', async () => {
    const profile = join(dir, 'port.yaml');
    await writeFile(profile, 'eap_methods: [md5]\nusers:\n  - { identity: u, password: p, methods: [md5] }\n');
    const { child, firstLine, exited } = await simulate([
      '--json',
      '--model',
      'm70',
      '--switch',
      `eth1=dot1x:${profile}`,
      '--fault',
      'error=1,times=1@GET /api/v1/interface/',
    ]);
    const info = JSON.parse(firstLine) as Record<string, string>;
    const auth = { authorization: `Basic ${Buffer.from(`admin:${info['password']}`).toString('base64')}` };
    const first = await request(`${info['api_url']}/interface/?config_state=active`, {
      dispatcher: insecure,
      headers: auth,
    });
    expect(first.statusCode).toBe(500);
    await first.body.dump();
    const state = (await (await request(`${info['control_url']}/state`)).body.json()) as {
      state: { model: string; switch_ports: unknown };
    };
    expect(state.state.model).toBe('m70');
    expect(state.state.switch_ports).toEqual({ eth1: { eap_methods: ['md5'], profile } });
    child.kill('SIGTERM');
    expect(await exited).toBe(0);
  });

  it('serves a fleet and writes its manifest, readable by its owner only', async () => {
    const manifestFile = join(dir, 'manifest.json');
    const { child, firstLine, exited } = await simulate(['--devices', '3', '--manifest', manifestFile, '--json']);
    const line = JSON.parse(firstLine) as { devices: number; manifest: string };
    expect(line).toMatchObject({ devices: 3, manifest: manifestFile });
    const manifest = JSON.parse(await readFile(manifestFile, 'utf8')) as {
      devices: { url: string; password: string }[];
    };
    expect(manifest.devices).toHaveLength(3);
    expect((await stat(manifestFile)).mode & 0o777).toBe(0o600);
    const device = manifest.devices[2]!;
    const res = await request(`${device.url}/api/v1/interface/?config_state=active`, {
      dispatcher: insecure,
      headers: { authorization: `Basic ${Buffer.from(`admin:${device.password}`).toString('base64')}` },
    });
    expect(res.statusCode).toBe(200);
    await res.body.dump();
    child.kill('SIGTERM');
    expect(await exited).toBe(0);
  });

  it('prints the fleet manifest as one JSON line without --manifest', async () => {
    const { child, firstLine, exited } = await simulate(['--devices', '2']);
    const manifest = JSON.parse(firstLine) as { control_url: string; devices: unknown[] };
    expect(manifest.devices).toHaveLength(2);
    expect(manifest.control_url).toMatch(/^http:\/\/127\.0\.0\.1:\d+$/);
    child.kill('SIGTERM');
    expect(await exited).toBe(0);
  });

  it.each([
    [
      ['--host', '192.0.2.1'],
      'mpprov simulate: Refusing to listen on 192.0.2.1: the simulator listens on loopback unless --allow-remote is given.\n',
    ],
    [['--switch', 'eth0'], 'mpprov simulate: --switch "eth0": write PORT=dot1x:PROFILE.yaml or PORT=open.\n'],
    [
      ['--fault', 'explode'],
      'mpprov simulate: Fault "explode": unknown kind "explode" (known: latency, error, drop, throttle, huge-body, restart-delay, no-return, pending-stuck, drop-field, new-cert, clock-offset). Syntax: KIND[=VALUE][,times=N][@[METHOD ]PATH].\n',
    ],
    [['--restart-ms', 'soon'], 'mpprov simulate: --restart-ms must be an integer from 0 to 3600000; "soon" is not.\n'],
    [['--model', 'm99'], 'mpprov simulate: Unknown model "m99"; built-in models: m50, m22, m70, virtual.\n'],
    [['--cert', '/nonexistent.pem'], 'mpprov simulate: --cert and --key go together.\n'],
  ])('refuses %j with exit status 64', async (args, message) => {
    const { exited, stderr } = await simulate(args);
    expect(await exited).toBe(64);
    expect(stderr()).toBe(message);
  });
});
