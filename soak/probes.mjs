// What the soak measures of the agent from outside, through /proc: open descriptors, resident
// memory, child processes, and the mounts under a folder.
import { readdir, readFile } from 'node:fs/promises';

export async function fdCount(pid) {
  return (await readdir(`/proc/${pid}/fd`)).length;
}

export async function rssKiB(pid) {
  const status = await readFile(`/proc/${pid}/status`, 'utf8');
  return Number(/^VmRSS:\s+(\d+) kB/m.exec(status)?.[1] ?? NaN);
}

/** The agent's child processes (every thread's), as `pid comm`: findmnt --poll is the one expected. */
export async function children(pid) {
  const out = [];
  for (const task of await readdir(`/proc/${pid}/task`).catch(() => [])) {
    const text = await readFile(`/proc/${pid}/task/${task}/children`, 'utf8').catch(() => '');
    for (const child of text.split(' ').filter((p) => p.trim() !== '')) {
      const comm = (await readFile(`/proc/${child}/comm`, 'utf8').catch(() => '?')).trim();
      out.push({ pid: Number(child), comm });
    }
  }
  return out;
}

/** Mount points at or under `dir` (mountinfo's field 5, octal escapes undone). */
export async function mountsUnder(dir) {
  const table = await readFile('/proc/self/mountinfo', 'utf8');
  return table
    .split('\n')
    .map((line) => line.split(' ')[4])
    .filter((target) => target !== undefined)
    .map((target) => target.replace(/\\([0-7]{3})/g, (_, o) => String.fromCharCode(Number.parseInt(o, 8))))
    .filter((target) => target === dir || target.startsWith(`${dir}/`));
}
