import { request } from 'node:http';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { JOB_ID_PATTERN } from '../../src/agent/index.js';
import { createJobBoard } from '../../src/agent/job-board.js';
import { Redactor } from '../../src/core/redact.js';
import { Secret } from '../../src/core/secret.js';
import { type StatusPage, startStatusPage } from '../../src/status-page/index.js';
import { connect } from 'node:net';
import { MAX_EVENT_CLIENTS } from '../../src/status-page/status-server.js';

/**
 * The status page's server over real HTTP on loopback: its routes, read-only methods, the Host
 * check against DNS rebinding, the SSE framing, its headers, and no secret in any byte it sends.
 */

const SECRET = 'Stick-Pa55word-0815';
const JOB = 'j20261123-100000-ab12';

interface Answer {
  status: number;
  headers: Record<string, string | string[] | undefined>;
  body: string;
}

/** `host: ''` sends no Host header at all. */
function get(port: number, path: string, options: { method?: string; host?: string } = {}): Promise<Answer> {
  return new Promise((resolve, reject) => {
    const host = options.host ?? `127.0.0.1:${port}`;
    const req = request(
      {
        host: '127.0.0.1',
        port,
        path,
        method: options.method ?? 'GET',
        setHost: false,
        headers: host === '' ? {} : { Host: host },
      },
      (res) => {
        const chunks: Buffer[] = [];
        res.on('data', (c: Buffer) => chunks.push(c));
        res.on('end', () =>
          resolve({ status: res.statusCode ?? 0, headers: res.headers, body: Buffer.concat(chunks).toString('utf8') }),
        );
      },
    );
    req.on('error', reject);
    req.end();
  });
}

/** Opens /events and collects its bytes until `until` holds for them; then closes the connection. */
function events(
  port: number,
  until: (text: string) => boolean,
  onOpen?: () => void,
): Promise<{ headers: Answer['headers']; text: string }> {
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`timed out waiting for events; got: ${text}`)), 5000);
    let text = '';
    const req = request({ host: '127.0.0.1', port, path: '/events', headers: { Host: `localhost:${port}` } }, (res) => {
      onOpen?.();
      res.on('data', (c: Buffer) => {
        text += c.toString('utf8');
        if (!until(text)) return;
        clearTimeout(timer);
        req.destroy();
        resolve({ headers: res.headers, text });
      });
    });
    req.on('error', (error) => {
      if (!text) reject(error);
    });
    req.end();
  });
}

describe('the status page server', () => {
  let page: StatusPage | undefined;
  let dir: string | undefined;
  afterEach(async () => {
    await page?.close();
    page = undefined;
    if (dir !== undefined) await rm(dir, { recursive: true, force: true });
  });

  async function serve(heartbeatMs = 60_000) {
    dir = await mkdtemp(join(tmpdir(), 'mpprov-page-'));
    const redactor = new Redactor([new Secret(SECRET)]);
    const board = createJobBoard({ redactor, version: '0.1.0', hostname: 'laptop' });
    // The local log as a buggy writer might have left it: the secret in plain text and base64.
    await writeFile(
      join(dir, `${JOB}.log`),
      `line one\nsent password ${SECRET}\nencoded ${Buffer.from(SECRET).toString('base64')}\n`,
    );
    page = await startStatusPage({
      host: '127.0.0.1',
      port: 0,
      source: board,
      readLog: async (id) => {
        const { readFile } = await import('node:fs/promises');
        return readFile(join(dir as string, `${id}.log`), 'utf8').catch(() => undefined);
      },
      isJobId: (id) => JOB_ID_PATTERN.test(id),
      redact: (text) => redactor.text(text),
      heartbeatMs,
    });
    return { board, port: page.port };
  }

  it('serves the page, its script and style with a strict CSP, nosniff and no CORS; anything else is 404', async () => {
    const { port } = await serve();
    expect(page?.url).toBe(`http://127.0.0.1:${port}/`);
    const html = await get(port, '/');
    expect(html.status).toBe(200);
    expect(html.headers['content-type']).toBe('text/html; charset=utf-8');
    expect(html.body).toContain('<script src="/page.js" defer></script>');
    expect(html.body).not.toMatch(/<script>|<script [^s]|https?:\/\//);
    expect(html.headers['content-security-policy']).toBe(
      "default-src 'none'; script-src 'self'; style-src 'self'; connect-src 'self'; img-src 'self'; base-uri 'none'; form-action 'none'; frame-ancestors 'none'",
    );
    expect(html.headers['x-content-type-options']).toBe('nosniff');
    expect(Object.keys(html.headers).filter((h) => h.startsWith('access-control-'))).toEqual([]);
    expect((await get(port, '/page.js')).headers['content-type']).toBe('text/javascript; charset=utf-8');
    expect((await get(port, '/page.css')).headers['content-type']).toBe('text/css; charset=utf-8');
    expect((await get(port, '/nothing')).status).toBe(404);
    expect((await get(port, '/?x=1')).status).toBe(200);
  });

  it('is read-only: every method but GET and HEAD is 405', async () => {
    const { port } = await serve();
    for (const method of ['POST', 'PUT', 'DELETE', 'PATCH', 'OPTIONS']) {
      const answer = await get(port, '/status.json', { method });
      expect([method, answer.status, answer.headers.allow]).toEqual([method, 405, 'GET, HEAD']);
    }
    const head = await get(port, '/status.json', { method: 'HEAD' });
    expect(head.status).toBe(200);
    expect(head.body).toBe('');
  });

  it('refuses a Host header that is not this loopback address or localhost on its own port (DNS rebinding)', async () => {
    const { port } = await serve();
    expect((await get(port, '/status.json', { host: `127.0.0.1:${port}` })).status).toBe(200);
    expect((await get(port, '/status.json', { host: `LOCALHOST:${port}` })).status).toBe(200);
    for (const host of [
      `evil.example:${port}`,
      'evil.example',
      `127.0.0.1:${port + 1}`,
      `localhost:${port}.evil.example`,
      '127.0.0.1',
      '',
    ]) {
      const answer = await get(port, '/status.json', { host });
      // No Host at all: node's own HTTP/1.1 check answers 400 before the page sees it.
      expect([host, answer.status]).toEqual([host, host === '' ? 400 : 403]);
      expect(answer.body).not.toContain('"jobs"');
    }
  });

  it('/events: a snapshot at once, another on each change, comment heartbeats; one data line per event', async () => {
    const { board, port } = await serve(100);
    const snapshots = (text: string): string[] => text.split('\n\n').filter((e) => e.startsWith('event: snapshot\n'));
    expect(page?.eventClients()).toBe(0);
    const got = await events(
      port,
      (text) => snapshots(text).length >= 2 && text.includes(': heartbeat\n\n'),
      () =>
        setTimeout(() => {
          expect(page?.eventClients()).toBe(1);
          board.start(JOB, {
            kind: 'stick',
            label: `MP${SECRET}`,
            location: '/media/MPSTICK',
            config: 'mpprov.yaml',
            started: new Date(),
            stage: 'applying',
          });
        }, 50),
    );
    expect(got.headers['content-type']).toBe('text/event-stream; charset=utf-8');
    expect(got.headers['content-security-policy']).toContain("default-src 'none'");
    expect(got.text.startsWith('retry: 2000\n\nevent: snapshot\ndata: {')).toBe(true);
    const [first, second] = snapshots(got.text).map((e) => e.split('\n'));
    expect(first).toHaveLength(2);
    expect(second).toHaveLength(2);
    expect(JSON.parse((first?.[1] ?? '').slice('data: '.length))).toMatchObject({ format: 1, jobs: [] });
    const after = JSON.parse((second?.[1] ?? '').slice('data: '.length)) as {
      jobs: { banner: string; label: string }[];
    };
    expect(after.jobs.map((j) => `${j.banner} ${j.label}`)).toEqual(['WORKING MP(secret)']);
    expect(got.text.includes(SECRET)).toBe(false);
    // The closed client is gone from the server's list.
    for (let i = 0; i < 100 && page?.eventClients() !== 0; i++) await new Promise((r) => setTimeout(r, 10));
    expect(page?.eventClients()).toBe(0);
  });

  it('/events: more open streams than the cap get 503, and a closed one frees its place', async () => {
    const { port } = await serve();
    const open: ReturnType<typeof request>[] = [];
    try {
      for (let i = 0; i < MAX_EVENT_CLIENTS; i++) {
        await new Promise<void>((resolve, reject) => {
          const req = request({ host: '127.0.0.1', port, path: '/events', agent: false }, (res) => {
            expect(res.statusCode).toBe(200);
            res.once('data', () => resolve());
          });
          req.on('error', reject);
          req.end();
          open.push(req);
        });
      }
      expect(page?.eventClients()).toBe(MAX_EVENT_CLIENTS);
      const refused = await get(port, '/events');
      expect(refused.status).toBe(503);
      expect(refused.headers['retry-after']).toBe('10');
      open.pop()?.destroy();
      for (let i = 0; i < 100 && page?.eventClients() !== MAX_EVENT_CLIENTS - 1; i++)
        await new Promise((r) => setTimeout(r, 10));
      const again = await events(port, (text) => text.includes('event: snapshot'));
      expect(again.text).toContain('event: snapshot');
    } finally {
      for (const req of open) req.destroy();
    }
  });

  it('/events: a client that stops reading is dropped once its backlog passes the cap, not buffered without end', async () => {
    const { board, port } = await serve();
    // A raw socket that sends the request and then never reads a byte.
    const socket = connect(port, '127.0.0.1');
    await new Promise<void>((resolve) => socket.once('connect', () => resolve()));
    socket.pause();
    const closed = new Promise<void>((resolve) => socket.once('close', () => resolve()));
    socket.write(`GET /events HTTP/1.1\r\nHost: 127.0.0.1:${port}\r\n\r\n`);
    for (let i = 0; i < 100 && page?.eventClients() !== 1; i++) await new Promise((r) => setTimeout(r, 10));
    expect(page?.eventClients()).toBe(1);
    // Big snapshots (a hundred devices with long names), one per turn of the loop: far more than the socket buffers hold.
    board.start(JOB, {
      kind: 'stick',
      label: 'MPSTICK',
      location: '/media/MPSTICK',
      config: 'mpprov.yaml',
      started: new Date(),
      stage: 'start',
    });
    board.expect(
      JOB,
      Array.from({ length: 100 }, (_, d) => ({
        name: `mp${d}-${'x'.repeat(290)}`,
        url: `https://192.0.2.1/${'y'.repeat(290)}`,
      })),
    );
    for (let i = 0; i < 400 && page?.eventClients() === 1; i++) {
      board.stage(JOB, `stage ${i}`);
      await new Promise((r) => setImmediate(r));
    }
    expect(page?.eventClients()).toBe(0);
    socket.resume();
    await closed;
  });

  it('/jobs/ID/log: the job log as text, redacted again; a bad id is 400, an unknown one 404; no secret anywhere', async () => {
    const { board, port } = await serve();
    board.start(JOB, {
      kind: 'stick',
      label: 'MPSTICK',
      location: '/media/MPSTICK',
      config: 'mpprov.yaml',
      started: new Date(),
      stage: 'applying',
    });
    board.event(JOB, {
      type: 'step-failed',
      device: 'mp1',
      index: 0,
      description: 'log in',
      error: `refused ${SECRET}`,
      elapsedMs: 1,
    });
    const log = await get(port, `/jobs/${JOB}/log`);
    expect(log.status).toBe(200);
    expect(log.headers['content-type']).toBe('text/plain; charset=utf-8');
    expect(log.body).toBe('line one\nsent password (secret)\nencoded (secret)\n');
    expect((await get(port, '/jobs/j20261123-100000-ffff/log')).status).toBe(404);
    for (const bad of [
      '..%2F..%2Fetc%2Fpasswd',
      'j20261123-100000-AB12',
      'x',
      '%00',
      '%E0%A4%A',
      'j20261123-100000-ab1%32',
    ])
      expect([bad, (await get(port, `/jobs/${bad}/log`)).status]).toEqual([bad, 400]);
    expect((await get(port, '/jobs/../../etc/passwd')).status).toBe(404);

    const json = await get(port, '/status.json');
    expect(json.headers['content-type']).toBe('application/json; charset=utf-8');
    expect(JSON.parse(json.body)).toMatchObject({
      jobs: [{ id: JOB, devices: [{ name: 'mp1', at: 'step 1 log in failed: refused (secret)' }] }],
    });
    const stream = await events(port, (text) => text.includes('event: snapshot'));
    for (const [what, bytes] of [
      ['status.json', json.body],
      ['events', stream.text],
      ['log', log.body],
    ] as const) {
      expect([what, bytes.includes(SECRET), bytes.includes(Buffer.from(SECRET).toString('base64'))]).toEqual([
        what,
        false,
        false,
      ]);
    }
  });
});
