import { afterAll, afterEach, beforeAll, beforeEach } from 'vitest';
import { startSimulator, type SimulatorHandle, type SimulatorOptions } from '../../src/simulator/index.js';

/**
 * The tests' one way to run simulated devices: real HTTPS on 127.0.0.1, port 0, always closed
 * afterwards, whatever the test did.
 *
 * - `useSimulator()`: one device for a file or describe block, reset (configuration, faults,
 *   request log) before each test; or a fresh one for each test; or one each test starts itself
 *   with its own options.
 * - `useSimulators()`: any number of devices a test starts itself, all closed after it.
 */

export interface SimulatorFixtureSettings {
  /**
   * `file` (default): one device for every test of the block, reset before each.
   * `test`: a fresh device before each test. `manual`: none until the test calls start().
   * With `test` and `manual` the device is closed after each test.
   */
  scope?: 'file' | 'test' | 'manual';
  /** With scope `file`: reset before each test (default). Off only for tests that build on each other. */
  reset?: boolean;
}

export interface SimulatorFixture {
  /**
   * The running device: URL, fingerprint, credentials, control URL, state and request log. A
   * stable handle that follows start(), so a file can take it once at the top
   * (`const { sim } = useSimulator()`) and use it in every test.
   */
  readonly sim: SimulatorHandle;
  /** A fresh device with `options` over the fixture's, in place of the running one, for the rest of this test; returns it. */
  start: (options?: SimulatorOptions) => Promise<SimulatorHandle>;
  /**
   * Something bound to the device, such as a client: opened each time a device starts, closed
   * before it closes. Returns a stable handle that follows it, as `sim` does.
   */
  attach<T extends object>(open: (sim: SimulatorHandle) => T, close: (value: T) => unknown): T;
}

interface Attachment {
  open(sim: SimulatorHandle): object;
  close(value: object): unknown;
  value: object | undefined;
}

/** Options are a function when they depend on what a beforeAll made (an authenticator profile). */
export function useSimulator(
  options: SimulatorOptions | (() => SimulatorOptions) = {},
  settings: SimulatorFixtureSettings = {},
): SimulatorFixture {
  const base = typeof options === 'function' ? options : () => options;
  const attachments: Attachment[] = [];
  let current: SimulatorHandle | undefined;
  /** With scope `file`: a test started a device of its own options, so the next one needs the fixture's again. */
  let replaced = false;

  const launch = async (extra: SimulatorOptions): Promise<SimulatorHandle> => {
    const sim = await startSimulator({ ...base(), ...extra });
    current = sim;
    for (const a of attachments) a.value = a.open(sim);
    return sim;
  };
  const shutdown = async (): Promise<void> => {
    for (const a of [...attachments].reverse()) {
      if (a.value !== undefined) await a.close(a.value);
      a.value = undefined;
    }
    await current?.close();
    current = undefined;
  };

  const scope = settings.scope ?? 'file';
  if (scope === 'file') {
    beforeAll(async () => {
      await launch({});
    });
    afterAll(shutdown);
    beforeEach(async () => {
      if (replaced) {
        replaced = false;
        await shutdown();
        await launch({});
      } else if (settings.reset !== false && current !== undefined) {
        await current.reset();
        current.clearRequests();
      }
    });
  } else {
    if (scope === 'test') {
      beforeEach(async () => {
        await launch({});
      });
    }
    afterEach(shutdown);
  }

  return {
    sim: follow(() => current, 'the simulated device'),
    async start(extra = {}) {
      await shutdown();
      replaced = true;
      return launch(extra);
    },
    attach<T extends object>(open: (sim: SimulatorHandle) => T, close: (value: T) => unknown): T {
      const attachment: Attachment = { open, close: (value) => close(value as T), value: undefined };
      attachments.push(attachment);
      return follow(() => attachment.value as T | undefined, 'what is attached to the simulated device');
    },
  };
}

/** Devices a test starts itself (as many as it likes, each with its own options); all closed after each test. */
// Function-valued properties, not methods: they are closures, so a test may take them apart
// (`const { start } = useSimulators()`) and the type says that is safe.
export interface SimulatorPool {
  start: (options?: SimulatorOptions) => Promise<SimulatorHandle>;
  /** Closes every device started so far; useSimulators() calls it after each test. */
  closeAll: () => Promise<void>;
}

export function simulatorPool(base: SimulatorOptions = {}): SimulatorPool {
  const started: SimulatorHandle[] = [];
  return {
    async start(options = {}) {
      const sim = await startSimulator({ ...base, ...options });
      started.push(sim);
      return sim;
    },
    async closeAll() {
      // A test may have closed some itself: closing a closed device again does nothing.
      for (const sim of started.splice(0).reverse()) await sim.close();
    },
  };
}

/** A pool whose devices start with `base` (e.g. PROFILE_DEVICE) under the test's own options, closed after each test. */
export function useSimulators(base: SimulatorOptions = {}): SimulatorPool {
  const pool = simulatorPool(base);
  afterEach(() => pool.closeAll());
  return pool;
}

/**
 * A stand-in that forwards every property to what `current()` returns now. Functions are bound
 * to it, getters read from it. Used before a device runs (at the top of a file) it says so.
 */
function follow<T extends object>(current: () => T | undefined, what: string): T {
  return new Proxy({} as T, {
    get(_stand, key) {
      const target = current();
      if (target === undefined) {
        // `await` and test tooling probe for these; they must not throw.
        if (key === 'then' || typeof key === 'symbol') return undefined;
        throw new Error(
          `${what} is not running: use it inside a test or a hook that runs after the fixture started it`,
        );
      }
      const value: unknown = Reflect.get(target, key, target);
      return typeof value === 'function' ? (value as (...args: unknown[]) => unknown).bind(target) : value;
    },
  });
}
