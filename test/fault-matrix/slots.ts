/**
 * At most `size` cells run at once: the matrix's tests are concurrent (each waits mostly on
 * restarts and timeouts), but every cell starts a CLI or agent process, and the machine has two
 * cores shared with other work. A cell waits here before it starts anything.
 */
export interface Slots {
  /** Runs `work` once a slot is free, and frees it when `work` settles. */
  run<T>(work: () => Promise<T>): Promise<T>;
}

export function slots(size: number): Slots {
  let busy = 0;
  const waiting: (() => void)[] = [];
  return {
    async run(work) {
      if (busy >= size) await new Promise<void>((resolve) => waiting.push(resolve));
      else busy += 1;
      try {
        return await work();
      } finally {
        const next = waiting.shift();
        // The slot passes straight to the next cell in line, or is freed.
        if (next === undefined) busy -= 1;
        else next();
      }
    },
  };
}
