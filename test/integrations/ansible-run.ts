import { spawn, spawnSync } from 'node:child_process';
import { mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { repoRoot } from '../support/run-cli.js';

/**
 * Running Debian's ansible-core for real against the collection in integrations/ansible: the
 * commands as child processes (asynchronous, so the simulated fleet in the test's own process
 * keeps answering), and the PLAY RECAP read back per host.
 */

export const collectionsPath = join(repoRoot, 'integrations/ansible');
export const examplesDir = join(collectionsPath, 'examples');
export const collectionDir = join(collectionsPath, 'ansible_collections/mpprov/mpprov');
/** The Python ansible-core runs on (Debian's); a pyenv shim first in PATH would lack the ansible package. */
export const systemPython = '/usr/bin/python3';

export interface ToolRun {
  code: number | null;
  stdout: string;
  stderr: string;
}

/** Fails with a sentence when a tool the test drives is missing: CI installs it, so a missing one is a broken machine, never a skip. */
export function requireTool(tool: string, why: string): void {
  if (spawnSync('sh', ['-c', `command -v ${tool}`]).status !== 0) {
    throw new Error(`${tool} is not installed: ${why} (apt-get install ansible-core, Debian's package; .ci/run installs it)`);
  }
}

/**
 * Ansible's environment for a test: the examples' own ansible.cfg (the collection beside them, the
 * inventory plugin, custom stats), its home (temp files, caches) in the test's folder instead of
 * /root/.ansible, no colour. TMPDIR too: a module's AnsiballZ payload is unpacked into Python's
 * temporary folder and left there when the test kills the module on purpose.
 */
export function ansibleEnv(work: string): NodeJS.ProcessEnv {
  const tmp = join(work, 'tmp');
  mkdirSync(tmp, { recursive: true });
  return {
    ...process.env,
    TMPDIR: tmp,
    ANSIBLE_CONFIG: join(examplesDir, 'ansible.cfg'),
    ANSIBLE_COLLECTIONS_PATH: collectionsPath,
    ANSIBLE_HOME: join(work, 'ansible-home'),
    ANSIBLE_LOCAL_TEMP: join(work, 'ansible-home/tmp'),
    ANSIBLE_NOCOLOR: '1',
    ANSIBLE_FORCE_COLOR: '0',
    ANSIBLE_RETRY_FILES_ENABLED: '0',
    ANSIBLE_STDOUT_CALLBACK: 'default',
    // No bytecode beside the collection's sources (a stale .pyc once got committed).
    PYTHONDONTWRITEBYTECODE: '1',
  };
}

export function runTool(command: string, args: readonly string[], options: { cwd: string; env: NodeJS.ProcessEnv }): Promise<ToolRun> {
  return new Promise((resolve, reject) => {
    const child = spawn(command, args, { cwd: options.cwd, env: options.env, stdio: ['ignore', 'pipe', 'pipe'] });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (chunk: Buffer) => (stdout += chunk.toString()));
    child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
    child.on('error', reject);
    child.on('close', (code) => resolve({ code, stdout, stderr }));
  });
}

export interface RecapCounts {
  ok: number;
  changed: number;
  unreachable: number;
  failed: number;
  skipped: number;
}

/** PLAY RECAP, per host: `mp-berlin-01 : ok=1 changed=1 unreachable=0 failed=0 skipped=0 ...`. */
export function playRecap(stdout: string): Record<string, RecapCounts> {
  const recap = stdout.slice(stdout.lastIndexOf('PLAY RECAP'));
  const hosts: Record<string, RecapCounts> = {};
  for (const match of recap.matchAll(/^(\S+)\s+:\s+ok=(\d+)\s+changed=(\d+)\s+unreachable=(\d+)\s+failed=(\d+)\s+skipped=(\d+)/gm)) {
    const [, host, ok, changed, unreachable, failed, skipped] = match;
    hosts[host!] = { ok: Number(ok), changed: Number(changed), unreachable: Number(unreachable), failed: Number(failed), skipped: Number(skipped) };
  }
  return hosts;
}
