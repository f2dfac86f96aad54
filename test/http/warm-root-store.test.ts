import { availableParallelism } from 'node:os';
import { createSecureContext } from 'node:tls';
import { describe, expect, it } from 'vitest';
import { warmRootCertificateStore } from '../../src/http/warm-root-store.js';

describe("building Node's root certificate store in a worker", () => {
  it('is skipped when NODE_EXTRA_CA_CERTS already had Node build it at start', () => {
    expect(warmRootCertificateStore({ NODE_EXTRA_CA_CERTS: '/etc/ssl/certs/ca-certificates.crt' })).toBeUndefined();
  });

  it('runs once per process, on a machine with a core to spare, and its worker ends by itself', async () => {
    const worker = warmRootCertificateStore({});
    if (availableParallelism() < 2) {
      expect(worker).toBeUndefined();
      return;
    }
    expect(worker).toBeDefined();
    // Its one job done without error (an exception in it would end it with 1).
    const exitCode = await new Promise<number>((resolve) => worker!.once('exit', resolve));
    expect(exitCode).toBe(0);
    expect(warmRootCertificateStore({})).toBeUndefined();
    // The process's own contexts are unaffected.
    expect(createSecureContext({}).context).toBeDefined();
  });
});
