import { rm, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { type AgentSettings, createReloader, type ReloadParts, withOverrides } from '../../src/agent/agent-reload.js';
import { openStateStore } from '../../src/agent/state-store.js';
import { type AgentConfig, agentSecrets, loadAgentConfig } from '../../src/config/index.js';
import { Redactor } from '../../src/core/redact.js';
import { tempFolder } from '../support/temp-folder.js';

/**
 * SIGHUP's reload on real agent.yaml files and real state folders. What follows the configuration
 * (the watchers, the status page) is the daemon's; here it is a recorder of what it was told.
 */

async function rig(extra = '', parts: Partial<ReloadParts> = {}) {
  const dir = tempFolder('reload');
  const file = join(dir, 'agent.yaml');
  const secret = (name: string, text: string): Promise<string> =>
    writeFile(join(dir, name), `${text}\n`, { mode: 0o600 }).then(() => join(dir, name));
  const yaml = async (body: string): Promise<void> => writeFile(file, `version: 1\n${body}`);
  await yaml(`media_roots: [${dir}/media]\nstate_dir: ${dir}/state\nlog_level: info\n${extra}`);
  const loaded = await loadAgentConfig(file, {});
  expect(loaded.problems).toEqual([]);
  const agent = loaded.config;
  const redactor = new Redactor();
  const state = await openStateStore(agent.stateDir, redactor);
  const lines: string[] = [];
  const levels: string[] = [];
  const followed: Array<[AgentConfig, AgentConfig]> = [];
  const initial: AgentSettings = { agent, state };
  const reloader = createReloader(initial, {
    file,
    env: {},
    overrides: {},
    redactor,
    removeStartSecrets: redactor.add(agentSecrets(agent)),
    logger: { log: (level, message) => lines.push(`${level} ${message}`), setLevel: (level) => levels.push(level) },
    follow: (before, after) => Promise.resolve(void followed.push([before, after])),
    ...parts,
  });
  return { dir, file, yaml, secret, redactor, initial, reloader, lines, levels, followed };
}

describe('SIGHUP: agent.yaml reloaded whole or not at all', () => {
  it('a valid file is taken: the settings, the log level, the secrets, and what follows them', async () => {
    const r = await rig();
    const oldPw = await r.secret('old.pw', 'old-secret-1234');
    await r.yaml(
      `media_roots: [${r.dir}/media]\nstate_dir: ${r.dir}/state\nlog_level: info\ndefaults: { password_file: ${oldPw} }\n`,
    );
    await r.reloader.reload();
    expect(r.redactor.text('old-secret-1234')).not.toContain('old-secret-1234');
    const newPw = await r.secret('new.pw', 'new-secret-5678');
    await r.yaml(
      `media_roots: [${r.dir}/media, ${r.dir}/more]\nstate_dir: ${r.dir}/state\nlog_level: debug\ndefaults: { password_file: ${newPw} }\nwhen_done: { eject: false }\n`,
    );
    await r.reloader.reload();
    const now = r.reloader.current();
    expect(now.agent.mediaRoots).toEqual([`${r.dir}/media`, `${r.dir}/more`]);
    expect(now.agent.whenDone.eject).toBe(false);
    // The same state folder: the same store, not a second one.
    expect(now.state).toBe(r.initial.state);
    expect(r.levels).toEqual(['info', 'debug']);
    expect(r.followed).toHaveLength(2);
    expect(r.followed[1]?.[1]).toBe(now.agent);
    expect(r.followed[1]?.[0].mediaRoots).toEqual([`${r.dir}/media`]);
    // One agent.yaml's secrets at a time: the old password is no longer one.
    expect(r.redactor.text('new-secret-5678')).not.toContain('new-secret-5678');
    expect(r.redactor.text('old-secret-1234')).toBe('old-secret-1234');
    expect(r.lines.at(-1)).toBe(
      `info SIGHUP: reloaded ${r.file}; media roots ${r.dir}/media, ${r.dir}/more, profiles (none)`,
    );
  });

  it('a file with a problem changes nothing, and its problem is said with its place', async () => {
    const r = await rig();
    await r.yaml(`media_roots: [${r.dir}/other]\nstate_dir: ${r.dir}/state\nlog_level: loud\n`);
    await r.reloader.reload();
    expect(r.reloader.current()).toBe(r.initial);
    expect(r.followed).toEqual([]);
    expect(r.levels).toEqual([]);
    expect(r.lines.some((l) => l.startsWith(`error agent config: ${r.file}:`))).toBe(true);
    expect(r.lines.at(-1)).toBe('error SIGHUP: the agent config is invalid; keeping the one in use');
  });

  it('a file gone since the start keeps the settings in use, not the defaults', async () => {
    const r = await rig();
    await rm(r.file);
    await r.reloader.reload();
    expect(r.reloader.current()).toBe(r.initial);
    expect(r.followed).toEqual([]);
    expect(r.lines).toEqual([`error SIGHUP: ${r.file} does not exist (any more); keeping the agent config in use`]);
  });

  it('a state folder that cannot be used refuses the whole reload, every other change included', async () => {
    const r = await rig('when_done: { eject: true }\n');
    const blocked = join(r.file, 'state');
    await r.yaml(
      `media_roots: [${r.dir}/other]\nstate_dir: ${blocked}\nlog_level: debug\nwhen_done: { eject: false }\n`,
    );
    await r.reloader.reload();
    expect(r.reloader.current()).toBe(r.initial);
    expect(r.reloader.current().agent.whenDone.eject).toBe(true);
    expect(r.followed).toEqual([]);
    expect(r.levels).toEqual([]);
    expect(r.lines).toHaveLength(1);
    expect(r.lines[0]).toMatch(
      new RegExp(`^error SIGHUP: cannot use the state directory ${blocked} \\(.+\\); keeping the agent config in use$`),
    );
  });

  it('a new state folder that can be used is opened and taken with the rest', async () => {
    const r = await rig();
    await r.yaml(`media_roots: [${r.dir}/media]\nstate_dir: ${r.dir}/state2\n`);
    await r.reloader.reload();
    expect(r.reloader.current().state.dir).toBe(`${r.dir}/state2`);
    expect(r.reloader.current().state).not.toBe(r.initial.state);
  });

  it("the command line's overrides win over every version of the file", async () => {
    const dir = tempFolder('reload-overrides');
    const r = await rig('', { overrides: { stateDir: `${dir}/cli-state` } });
    await r.yaml(`media_roots: [${r.dir}/media]\nstate_dir: ${r.dir}/elsewhere\n`);
    await r.reloader.reload();
    expect(r.reloader.current().agent.stateDir).toBe(`${dir}/cli-state`);
    expect(withOverrides(r.initial.agent, {})).toBe(r.initial.agent);
  });

  it('reloads run one after the other, and a reload that throws is said and does not stop the next', async () => {
    let inside = 0;
    let most = 0;
    let calls = 0;
    const r = await rig('', {
      follow: async () => {
        calls++;
        inside++;
        most = Math.max(most, inside);
        await new Promise((resolve) => setTimeout(resolve, 30));
        inside--;
        if (calls === 1) throw new Error('the status page could not listen');
      },
    });
    const all = [r.reloader.reload(), r.reloader.reload(), r.reloader.reload()];
    await Promise.all(all);
    await r.reloader.settled();
    expect(calls).toBe(3);
    expect(most).toBe(1);
    expect(r.lines.filter((l) => l === 'error SIGHUP: reload failed: the status page could not listen')).toHaveLength(
      1,
    );
    expect(r.lines.filter((l) => l.startsWith('info SIGHUP: reloaded'))).toHaveLength(2);
  });
});
