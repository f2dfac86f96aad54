import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { loadAgentConfig, parseListen } from '../../src/config/index.js';

/** agent.yaml `status_page.listen`: loopback only, every other address a located problem with a hint. */

async function load(yaml: string): ReturnType<typeof loadAgentConfig> {
  const dir = mkdtempSync(join(tmpdir(), 'mpprov-listen-'));
  writeFileSync(join(dir, 'agent.yaml'), yaml);
  return loadAgentConfig(join(dir, 'agent.yaml'), {});
}

describe('status_page.listen', () => {
  it('is off when omitted', async () => {
    expect((await loadAgentConfig('/nonexistent/agent.yaml', {})).config.statusPage).toBeUndefined();
    expect((await load('version: 1\n')).config.statusPage).toBeUndefined();
  });

  it('takes a loopback address in every spelling, and port 0 for a free port', () => {
    expect(parseListen('127.0.0.1:8471')).toEqual({ host: '127.0.0.1', port: 8471, text: '127.0.0.1:8471' });
    expect(parseListen('127.8.9.10:0')).toEqual({ host: '127.8.9.10', port: 0, text: '127.8.9.10:0' });
    expect(parseListen('localhost:8471')).toEqual({ host: '127.0.0.1', port: 8471, text: 'localhost:8471' });
    expect(parseListen('[::1]:8471')).toEqual({ host: '::1', port: 8471, text: '[::1]:8471' });
    expect(parseListen('[0:0:0:0:0:0:0:1]:9000')).toMatchObject({ host: '::1', port: 9000 });
  });

  it('refuses anything that is not loopback, with a sentence and a hint', () => {
    const hint =
      'write it like 127.0.0.1:8471 (or [::1]:8471, localhost:8471): the status page is for this laptop only';
    const notLoopback = (host: string): string =>
      `'${host}' is not a loopback address: the status page is served on this laptop only and has no login`;
    expect(parseListen('0.0.0.0:8471')).toEqual({ message: notLoopback('0.0.0.0'), hint });
    expect(parseListen('192.168.1.5:8471')).toEqual({ message: notLoopback('192.168.1.5'), hint });
    expect(parseListen('[::]:8471')).toEqual({ message: notLoopback('::'), hint });
    expect(parseListen('example.com:8471')).toEqual({ message: notLoopback('example.com'), hint });
    expect(parseListen(':8471')).toEqual({ message: notLoopback(''), hint });
    expect(parseListen('127.0.0.1')).toEqual({ message: "'127.0.0.1' is not HOST:PORT", hint });
    expect(parseListen('127.0.0.1:99999')).toEqual({ message: 'port 99999 is out of range (0 to 65535)', hint });
    expect(parseListen('::1:8471')).toEqual({ message: "'::1:8471' is not HOST:PORT", hint });
    expect(parseListen('[localhost]:8471')).toEqual({ message: "'localhost' is not an IPv6 address", hint });
  });

  it('a refused address is a located problem in agent.yaml, and the agent config is refused', async () => {
    const { problems, config } = await load('version: 1\nstatus_page:\n  listen: "0.0.0.0:8471"\n');
    expect(config.statusPage).toBeUndefined();
    expect(problems.map((p) => `${p.line}:${p.column} ${p.path} ${p.message} / ${p.hint}`)).toEqual([
      "3:11 status_page.listen '0.0.0.0' is not a loopback address: the status page is served on this laptop only and has no login / write it like 127.0.0.1:8471 (or [::1]:8471, localhost:8471): the status page is for this laptop only",
    ]);
  });

  it('a wrong type or an unknown key is a located problem too', async () => {
    const at = async (yaml: string): Promise<string[]> =>
      (await load(yaml)).problems.map((p) => `${p.line}:${p.column} ${p.path}`);
    expect(await at('version: 1\nstatus_page:\n  listen: 8471\n')).toEqual(['3:11 status_page.listen']);
    expect(await at('version: 1\nstatus_page:\n  port: 8471\n')).toEqual([
      '3:3 status_page.listen',
      '3:3 status_page.port',
    ]);
    expect((await load('version: 1\nstatus_page: { listen: "127.0.0.1:8471" }\n')).config.statusPage?.listen).toEqual({
      host: '127.0.0.1',
      port: 8471,
      text: '127.0.0.1:8471',
    });
  });
});
