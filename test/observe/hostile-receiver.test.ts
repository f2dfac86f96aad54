import { connect, type Socket } from 'node:net';
import { Agent, request } from 'undici';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  MAX_CONNECTIONS,
  MAX_CONNECTIONS_PER_ADDRESS,
  startEventReceiver,
  type EventReceiver,
} from '../../src/observe/event-receiver.js';
import type { ServiceEvent } from '../../src/observe/service-event.js';

/**
 * The receiver as a hostile network meets it, over real sockets on loopback: a flood of
 * connections that never finish a request, and bodies that parse but are no event. Memory and file
 * descriptors stay bounded, and the real service's next event is still answered 204.
 */

const PATH = '/mpprov-events/00112233445566778899aabbccddeeff';
let receiver: EventReceiver;
const accepted: ServiceEvent[] = [];
const refused: number[] = [];

beforeAll(async () => {
  receiver = await startEventReceiver({
    host: '127.0.0.1',
    port: 0,
    path: PATH,
    onEvent: (event) => accepted.push(event),
    onRefused: (status) => refused.push(status),
  });
});
afterAll(async () => {
  await receiver?.close();
});

const post = async (body: string): Promise<number> => {
  const answer = await request(`http://127.0.0.1:${receiver.port}${PATH}`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body,
  });
  await answer.body.dump();
  return answer.statusCode;
};

describe('the events receiver under a hostile network', () => {
  it('drops connections past its bound on accept instead of holding each one, and still takes an event', async () => {
    const flood: Socket[] = [];
    let closedByServer = 0;
    try {
      for (let i = 0; i < MAX_CONNECTIONS + 60; i++) {
        const socket = connect(receiver.port, '127.0.0.1');
        socket.on('error', () => undefined);
        socket.on('close', () => (closedByServer += 1));
        await new Promise<void>((resolve) => socket.once('connect', resolve));
        // A request that never ends (slowloris): its headers never finish.
        socket.write(`POST ${PATH} HTTP/1.1\r\nHost: x\r\n`);
        flood.push(socket);
      }
      for (let i = 0; i < 200 && closedByServer < 60; i++) await new Promise((r) => setTimeout(r, 25));
      expect(closedByServer).toBeGreaterThanOrEqual(60);
    } finally {
      for (const socket of flood) socket.destroy();
    }
    for (let i = 0; i < 200 && flood.some((s) => !s.closed); i++) await new Promise((r) => setTimeout(r, 10));
    const event = { type: 'SEQUENCER_EVENT', sequencerName: 'mp-after-flood', sequencerStatus: 'AVAILABLE' };
    // The server counts a destroyed socket out when it notices the close: a retry or two may be needed.
    let status = 0;
    for (let i = 0; i < 50 && status !== 204; i++) status = await post(JSON.stringify(event)).catch(() => 0);
    expect(status).toBe(204);
  });

  it("takes the service's event from another address while one host holds every connection it can", async () => {
    const flood: Socket[] = [];
    let closedByServer = 0;
    try {
      for (let i = 0; i < MAX_CONNECTIONS + 10; i++) {
        const socket = connect({ port: receiver.port, host: '127.0.0.1', localAddress: '127.0.0.1' });
        socket.on('error', () => undefined);
        socket.on('close', () => (closedByServer += 1));
        await new Promise<void>((resolve) => socket.once('connect', resolve));
        flood.push(socket);
      }
      const kept = MAX_CONNECTIONS + 10 - MAX_CONNECTIONS_PER_ADDRESS;
      for (let i = 0; i < 200 && closedByServer < kept; i++) await new Promise((r) => setTimeout(r, 25));
      // At least: a keep-alive connection of an earlier request may hold one of the address's slots.
      expect(closedByServer).toBeGreaterThanOrEqual(kept);
      const service = new Agent({ localAddress: '127.0.0.2' });
      try {
        const answer = await request(`http://127.0.0.1:${receiver.port}${PATH}`, {
          method: 'POST',
          body: JSON.stringify({ type: 'SEQUENCER_EVENT', sequencerName: 'mp-other-address' }),
          dispatcher: service,
        });
        await answer.body.dump();
        expect(answer.statusCode).toBe(204);
      } finally {
        await service.close();
      }
    } finally {
      for (const socket of flood) socket.destroy();
    }
  });

  it('answers 400 to a body nested too deep to be an event, which would overflow the writer', async () => {
    const depth = 30_000;
    const deep = `{"type":"SEQUENCER_EVENT","x":${'['.repeat(depth)}${']'.repeat(depth)}}`;
    expect(deep.length).toBeLessThan(64 * 1024);
    const before = accepted.length;
    expect(await post(deep)).toBe(400);
    expect(await post('{"type":"SEQUENCER_EVENT","x":{"a":[{"b":1}]}}')).toBe(204);
    for (let i = 0; i < 100 && accepted.length === before; i++) await new Promise((r) => setTimeout(r, 10));
    expect(accepted.slice(before)).toEqual([{ type: 'SEQUENCER_EVENT', x: { a: [{ b: 1 }] } }]);
  });
});
