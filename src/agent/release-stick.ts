import { execFile } from 'node:child_process';
import { access, constants } from 'node:fs/promises';
import { delimiter, join } from 'node:path';
import { promisify } from 'node:util';
import { type MountEntry, readMountTable } from '../ingest/index.js';
import { aliasFolder, type FolderAlias } from './folder-alias.js';

/**
 * Releasing a stick once its job is written down and synced (agent.yaml `when_done.eject`): the
 * laptop's version of a vendor's "all LEDs green". With udisks2 the stick is unmounted through it
 * and powered off, so it vanishes from the file manager; without it a plain unmount (fusermount
 * for FUSE mounts such as fusefat, umount otherwise). The commands are built by a pure function
 * (tested on its own: udisks2 does not run on every test machine) and run by `releaseStick`.
 */

const run = promisify(execFile);

/** One command to run, in order; `optional` ones may fail without the release failing. */
export interface ReleaseCommand {
  argv: string[];
  optional: boolean;
}

/**
 * What releases `entry`: FUSE mounts (fuse.fusefat, fuseblk's user side) are the FUSE server's,
 * so `fusermount -u`; a block device with udisks2 present: `udisksctl unmount` then
 * `udisksctl power-off` (optional: a card reader may refuse it, the stick is unmounted anyway);
 * else `umount` of the mount point. `mountPoint` is how the tools are told the mount point: its
 * name, unless that is not UTF-8 text (see releaseStick).
 */
export function releaseCommands(
  entry: Pick<MountEntry, 'target' | 'source' | 'fstype'>,
  tools: { udisksctl: boolean; fusermount: string },
  mountPoint = entry.target,
): ReleaseCommand[] {
  if (entry.fstype === 'fuse' || entry.fstype.startsWith('fuse.'))
    return [{ argv: [tools.fusermount, '-u', mountPoint], optional: false }];
  if (tools.udisksctl && entry.source.startsWith('/dev/')) {
    return [
      { argv: ['udisksctl', 'unmount', '--block-device', entry.source, '--no-user-interaction'], optional: false },
      { argv: ['udisksctl', 'power-off', '--block-device', entry.source, '--no-user-interaction'], optional: true },
    ];
  }
  return [{ argv: ['umount', mountPoint], optional: false }];
}

async function onPath(program: string, path = process.env.PATH ?? ''): Promise<boolean> {
  for (const dir of path.split(delimiter)) {
    if (dir === '') continue;
    try {
      await access(join(dir, program), constants.X_OK);
      return true;
    } catch {
      // not in this folder
    }
  }
  return false;
}

export type ReleaseOutcome = { released: true; how: string } | { released: false; why: string };

/**
 * Unmounts (and where it can, powers off) the stick mounted at `root` (the mount point as the
 * mount table shows it: escaped when its name is not UTF-8). Never throws: a stick the agent
 * cannot release is still finished, the technician unmounts it as usual.
 */
export async function releaseStick(root: string, options: { mountinfoFile?: string } = {}): Promise<ReleaseOutcome> {
  let entry: MountEntry | undefined;
  try {
    entry = (await readMountTable(options.mountinfoFile)).filter((e) => e.target === root).at(-1);
  } catch (error) {
    return { released: false, why: `the mount table cannot be read (${(error as Error).message})` };
  }
  if (entry === undefined) return { released: false, why: `${root} is no longer mounted` };
  // A mount point whose name is not UTF-8 cannot be an argument (arguments are UTF-8 text): the
  // tools get a link to its bytes, as `<link>/.`. fusermount resolves every part of the path but
  // the last, which it never follows (given the link itself it fails: "Invalid argument"); with
  // "/." after it the link is a part it resolves, and umount follows it either way.
  let alias: FolderAlias | undefined;
  if (entry.targetBytes !== undefined) {
    try {
      alias = await aliasFolder(entry.targetBytes);
    } catch (error) {
      return { released: false, why: `no link to ${root} could be made for umount (${(error as Error).message})` };
    }
  }
  try {
    return await unmount(entry, alias === undefined ? entry.target : `${alias.path}/.`);
  } finally {
    await alias?.remove();
  }
}

async function unmount(entry: MountEntry, mountPoint: string): Promise<ReleaseOutcome> {
  const udisksctl = await onPath('udisksctl');
  const fusermount = (await onPath('fusermount')) ? 'fusermount' : 'fusermount3';
  let commands = releaseCommands(entry, { udisksctl, fusermount }, mountPoint);
  const done: string[] = [];
  for (let i = 0; i < commands.length; i++) {
    const command = commands[i] as ReleaseCommand;
    try {
      await run(command.argv[0] as string, command.argv.slice(1), { timeout: 30_000 });
      done.push(command.argv.slice(0, 2).join(' '));
    } catch (error) {
      if (command.optional) continue;
      // udisksctl present but its daemon not running (or the mount not its own): plain umount.
      if (command.argv[0] === 'udisksctl' && i === 0) {
        commands = [...commands.slice(0, i + 1), { argv: ['umount', mountPoint], optional: false }];
        continue;
      }
      const output = (error as { stderr?: unknown }).stderr;
      const stderr = (typeof output === 'string' ? output : '').trim().split('\n')[0];
      // Said with the mount point as shown, not the link the tool was given.
      const said = command.argv.map((arg) => (arg === mountPoint ? entry.target : arg)).join(' ');
      return { released: false, why: `${said} failed${stderr === '' ? '' : `: ${stderr}`}` };
    }
  }
  return { released: true, how: done.join(', then ') };
}
