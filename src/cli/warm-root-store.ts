import { availableParallelism } from 'node:os';
import type { Worker } from 'node:worker_threads';

/**
 * Has a worker thread build Node's store of its bundled root certificates while the main thread
 * reads and checks the file, for a command about to open TLS connections. Node builds that store
 * (about 140 certificates parsed, 20 ms of CPU on this machine) the first time any TLS context is
 * made, with a configured CA too (it compares against it), and the store is one for the whole
 * process: built by the worker, the first connection finds it ready. Measured on `apply` (PEAP,
 * restart): spawn to restart request ~20 ms sooner.
 *
 * Not done where it buys nothing: NODE_EXTRA_CA_CERTS set (Node then builds the store before any
 * JavaScript runs) or a single core (the worker would take the main thread's time; it also costs
 * about 40 ms of CPU of its own). The worker runs Node's own code only, nothing from the input nor
 * the operator's preloads, and never holds the process open; a failure to start it changes nothing
 * but the time. Returns the worker when one was started.
 */
export function warmRootCertificateStore(env: NodeJS.ProcessEnv = process.env): Worker | undefined {
  if (started || (env.NODE_EXTRA_CA_CERTS ?? '') !== '' || availableParallelism() < 2) return undefined;
  started = true;
  try {
    const { Worker: Thread } = process.getBuiltinModule('node:worker_threads');
    // No execArgv and an empty env: a worker otherwise runs the operator's preloads again (node's
    // --require/--import, NODE_OPTIONS'), a second time in a thread, and what they write to the
    // process's descriptors is printed twice. The store does not depend on either: Node reads the
    // options that shape it (--use-openssl-ca, NODE_EXTRA_CA_CERTS) once, for the whole process.
    const worker = new Thread("require('node:tls').createSecureContext();", {
      eval: true,
      execArgv: [],
      env: {},
      stdout: true,
      stderr: true,
    });
    worker.on('error', () => undefined);
    worker.unref();
    return worker;
  } catch {
    return undefined;
  }
}

let started = false;
