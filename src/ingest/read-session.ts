/**
 * What one job has read from a stick: each file once, and a bound on the bytes the stick makes
 * the agent hold. A configuration may name the same 1 MiB file a thousand times (under one name,
 * `./name`, a hard link, a link inside the stick); read afresh each time, that was a gigabyte.
 * A file is known by its real path and by its identity (device and inode), so every spelling of
 * it gets the bytes read the first time, the same Buffer. Only new bytes count toward the bound.
 */

/** The most a stick's referenced files may make the agent hold at once. */
const MAX_HELD_BYTES = 64 * 1024 * 1024;
const MAX_HELD_TEXT = '64 MiB';

export class ReadSession {
  readonly #byPath = new Map<string, Buffer>();
  readonly #byIdentity = new Map<string, Buffer>();
  #held = 0;

  constructor(readonly budget: number = MAX_HELD_BYTES) {}

  /** Bytes held for this job so far. */
  get held(): number {
    return this.#held;
  }

  /** The bytes read earlier from this real path, if any. */
  byPath(realPath: Buffer): Buffer | undefined {
    return this.#byPath.get(pathKey(realPath));
  }

  /** The bytes read earlier from this file under another path (a hard link): now known by this path too. */
  byIdentity(dev: number, ino: number, realPath: Buffer): Buffer | undefined {
    const bytes = this.#byIdentity.get(`${dev}:${ino}`);
    if (bytes !== undefined) this.#byPath.set(pathKey(realPath), bytes);
    return bytes;
  }

  /** True when `bytes` more would stay within the bound. */
  fits(bytes: number): boolean {
    return this.#held + bytes <= this.budget;
  }

  /** Counts bytes the job holds because of the stick beyond a file's own (a secret's redaction forms). */
  charge(bytes: number): void {
    this.#held += bytes;
  }

  remember(realPath: Buffer, dev: number, ino: number, bytes: Buffer): void {
    this.#byPath.set(pathKey(realPath), bytes);
    this.#byIdentity.set(`${dev}:${ino}`, bytes);
    this.charge(bytes.length);
  }
}

/** A path's bytes as a map key, one character per byte. */
function pathKey(path: Buffer): string {
  return path.toString('latin1');
}

/** The sentence for a file that would take the stick past the bound: said at the key that names it. */
export function overBudget(what: string): { message: string; hint: string } {
  return {
    message: `${what} was not kept: with the files named before it, this configuration's files would take more than ${MAX_HELD_TEXT} of memory`,
    hint: 'name fewer or smaller files (naming the same file again costs nothing)',
  };
}
