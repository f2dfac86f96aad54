import { execFileSync, spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { afterEach } from 'vitest';
import type { AgentWorld } from './agent-process.js';

/**
 * Sticks for the mount races: an ext2 image on a loop device, mounted under the media root. Like
 * a real stick put back, each mount is a file system of its own (its unmount ends the root's
 * inotify watch with IN_UNMOUNT) with the same device number every time, and what the agent wrote
 * is still there at the next mount; a mount takes milliseconds, where fusefat takes a process.
 * A tmpfs bind mount will not do: unmounting a bind leaves its file system mounted, so no
 * IN_UNMOUNT, and the table read after a quick remount is the same as before (kernel-reused mount
 * ID), so a remount findmnt misses cannot be seen at all.
 * The world's folder is made a shared mount first: a process that copies the mount namespace
 * meanwhile (`ip netns exec`, as the 802.1X tests' daemons run) then gets slave copies, which our
 * unmounts reach; a private copy would keep the stick's file system alive after our unmount, and
 * every remount would be the bind mount's blind kind.
 * Register after useAgentRig(): vitest runs after-hooks in reverse, so these are gone before the
 * rig removes the world.
 */

export interface LoopStick {
  /** /dev/loopN */
  device: string;
  /** The mount point under the media root. */
  mountPoint: string;
  /** The shell command that inserts it (for a test's own timed sequence). */
  mountCommand: string;
  insert(): void;
  remove(): void;
  /** A file on the stick (while it is inserted), or undefined. */
  read(name: string): string | undefined;
}

export function requireLoopTools(): void {
  if (!existsSync('/dev/loop-control'))
    throw new Error(
      '/dev/loop-control is missing: these tests mount ext2 images on loop devices (root and a kernel with loop support, as CI has)',
    );
  for (const [tool, pkg] of [
    ['mkfs.ext2', 'e2fsprogs'],
    ['losetup', 'mount'],
  ] as const) {
    if (spawnSync('sh', ['-c', `command -v ${tool}`]).status !== 0)
      throw new Error(`${tool} is missing: apt-get install -y ${pkg} (.ci/run installs it)`);
  }
}

export function useLoopSticks(): (
  world: AgentWorld,
  label: string,
  files: Record<string, string | Buffer>,
) => LoopStick {
  const made: LoopStick[] = [];
  const shared: string[] = [];
  const unmountAll = (dir: string): void => {
    while (spawnSync('mountpoint', ['-q', dir]).status === 0) execFileSync('umount', ['-l', dir]);
  };
  afterEach(() => {
    for (const stick of made.splice(0)) {
      unmountAll(stick.mountPoint);
      spawnSync('losetup', ['-d', stick.device]);
    }
    for (const dir of shared.splice(0)) unmountAll(dir);
  });
  return (world, label, files) => {
    if (!shared.includes(world.dir)) {
      execFileSync('sh', ['-c', `mount --bind ${world.dir} ${world.dir} && mount --make-rshared ${world.dir}`]);
      shared.push(world.dir);
    }
    const content = join(world.dir, `content-${label.toLowerCase()}`);
    for (const [path, bytes] of Object.entries(files)) {
      mkdirSync(dirname(join(content, path)), { recursive: true });
      writeFileSync(join(content, path), bytes);
    }
    const image = join(world.dir, `${label.toLowerCase()}.ext2`);
    writeFileSync(image, '');
    execFileSync('truncate', ['-s', '8M', image]);
    execFileSync('mkfs.ext2', ['-q', '-F', '-L', label, '-d', content, image]);
    const device = execFileSync('losetup', ['--find', '--show', image], { encoding: 'utf8' }).trim();
    const mountPoint = join(world.mediaRoot, label);
    mkdirSync(mountPoint, { recursive: true });
    const mountCommand = `mount -t ext2 ${device} ${mountPoint}`;
    const stick: LoopStick = {
      device,
      mountPoint,
      mountCommand,
      insert: () => execFileSync('sh', ['-c', mountCommand]),
      remove: () => execFileSync('umount', [mountPoint]),
      read(name) {
        try {
          return readFileSync(join(mountPoint, name), 'utf8');
        } catch {
          return undefined;
        }
      },
    };
    made.push(stick);
    return stick;
  };
}
