import { connect } from 'node:net';
import { raisedWhileConnecting } from './create-connector.js';

/**
 * A bare TCP connect to `host:port`, closed again at once: resolves with the connect error when
 * the port refused it (ECONNREFUSED: nothing listens there, the peer said so), else undefined:
 * accepted, another failure, no answer within `deadlineMs`, or `signal` stopped it.
 *
 * For the restart wait: while a device restarts its web server refuses connections, and telling
 * that from a TCP connect costs about 0.1 ms of CPU, where a full probe (an HTTP client, a TLS
 * socket, the request, the failure classified) costs 1-1.5 ms. Only the refusal is taken from
 * here; anything else is for the full probe to meet and name. `host` is an IP address: a name
 * would be looked up again for every knock.
 */
export function refusedConnect(
  host: string,
  port: number,
  deadlineMs: number,
  signal?: AbortSignal,
): Promise<NodeJS.ErrnoException | undefined> {
  return new Promise((resolve) => {
    if (signal?.aborted === true) {
      resolve(undefined);
      return;
    }
    const socket = connect({ host, port });
    let settled = false;
    const finish = (refusal: NodeJS.ErrnoException | undefined): void => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      signal?.removeEventListener('abort', stop);
      socket.destroy();
      resolve(refusal);
    };
    const stop = (): void => finish(undefined);
    const timer = setTimeout(stop, deadlineMs);
    signal?.addEventListener('abort', stop, { once: true });
    socket.once('connect', stop);
    // `on`, not `once`: an error after the end finds a listener (it would otherwise be thrown).
    // A connect-phase error, as the full probe's would be: nothing was sent ("cannot reach", not
    // "lost the connection during GET").
    socket.on('error', (error: NodeJS.ErrnoException) =>
      finish(error.code === 'ECONNREFUSED' ? raisedWhileConnecting(error) : undefined),
    );
  });
}
