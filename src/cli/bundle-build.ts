import { closeSync, constants, openSync, readSync } from 'node:fs';

/**
 * Which build a bundle is of: packaging/bundle.mjs writes `// mpprov-build ` and 16 hex digits,
 * the same in every bundle of one build, as its first line.
 */
const BUILD_LINE = /^\/\/ mpprov-build ([0-9a-f]{16})\n/;

/** The build stamp of `file`, or undefined: unreadable, or a bundle without one (built before stamps). */
export function buildOf(file: string): string | undefined {
  let fd: number;
  try {
    // Non-blocking: a FIFO in a bundle's place would hold the open until someone writes to it.
    fd = openSync(file, constants.O_RDONLY | constants.O_NONBLOCK);
  } catch {
    return undefined;
  }
  try {
    const head = Buffer.alloc(64);
    const read = readSync(fd, head, 0, head.length, 0);
    return BUILD_LINE.exec(head.subarray(0, read).toString('latin1'))?.[1];
  } catch {
    return undefined;
  } finally {
    closeSync(fd);
  }
}

/** Whether `a` and `b` are bundles of one build: both stamped, with the same stamp. */
export function sameBuild(a: string, b: string): boolean {
  const build = buildOf(a);
  return build !== undefined && build === buildOf(b);
}
