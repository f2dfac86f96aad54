import { spawnIn, stopDaemon, type PortSession } from './port-namespace.js';

/**
 * Whether `gateway` answers ARP on `device` within `timeoutMs`: ARP rather than ping, as a
 * gateway that drops ICMP still has to answer ARP to route anything.
 */
export async function gatewayAnswers(
  session: PortSession,
  device: string,
  gateway: string,
  timeoutMs: number,
): Promise<boolean> {
  const seconds = Math.max(1, Math.round(timeoutMs / 1000));
  const child = spawnIn(session, session.tools.arping, ['-f', '-c', '3', '-w', String(seconds), '-I', device, gateway]);
  const code = await new Promise<number | null>((resolve) => {
    const timer = setTimeout(() => resolve(null), timeoutMs + 1_000);
    child.once('exit', (exitCode) => (clearTimeout(timer), resolve(exitCode)));
    child.once('error', () => (clearTimeout(timer), resolve(null)));
  });
  await stopDaemon(child);
  return code === 0;
}
