import { createServer, type Server } from 'node:https';
import type { AddressInfo } from 'node:net';
import { createSelfSignedCertificate } from '../../src/simulator/index.js';

/**
 * A lying device: a real HTTPS server on loopback that answers the reads mpprov needs (one eth0
 * reached at 127.0.0.1, a capability list) and refuses every change with a 400 whose sentence
 * quotes our request back: the Authorization header as it came, and each field of the body as
 * `echo` renders it (as sent, or base64/hex/URL-encoded). The simulator never echoes; real
 * devices may, so this is how tests prove that nothing of it reaches mpprov's outputs.
 */
export interface EchoingDevice {
  url: string;
  fingerprintSha256: string;
  /** Every request body the device was sent, in order. */
  bodies(): string[];
  close(): void;
}

/**
 * raw: the JSON body as sent; encoded: each field base64/hex/URL-encoded; decoded-long: each field's
 * value as it is, after a preamble long enough that a one-line cut at 500 characters falls inside it;
 * body-base64, body-hex, body-url: the whole body encoded as one (a secret inside at no fixed offset);
 * shifted-base64: each password field base64-encoded after one and after two other bytes (no
 * character in common with the password's own base64); zero-width: each password field with U+200B
 * between its characters (drawn by a terminal as the plain password).
 */
export type EchoStyle =
  'raw' | 'encoded' | 'decoded-long' | 'body-base64' | 'body-hex' | 'body-url' | 'shifted-base64' | 'zero-width';

export async function startEchoingDevice(style: EchoStyle = 'raw'): Promise<EchoingDevice> {
  const cert = createSelfSignedCertificate();
  const bodies: string[] = [];
  const server: Server = createServer({ cert: cert.certificatePem, key: cert.privateKeyPem }, (req, res) => {
    let body = '';
    req.on('data', (c: Buffer) => (body += c.toString()));
    req.on('end', () => {
      if (body !== '') bodies.push(body);
      res.setHeader('content-type', 'application/json');
      const path = req.url ?? '';
      if (req.method === 'GET' && path.startsWith('/api/v1/interface/')) {
        res.end(
          JSON.stringify({
            success: true,
            interfaces: [{ name: 'eth0', families: { inet: { method: 'dhcp', in_use: { address: '127.0.0.1' } } } }],
          }),
        );
      } else if (req.method === 'GET' && path.startsWith('/api/v1/appliance/capability')) {
        res.end(
          JSON.stringify({
            success: true,
            interfaces: { eth0: { autoneg: true }, eth1: { autoneg: true }, wlan0: { wireless: true } },
          }),
        );
      } else {
        res.statusCode = 400;
        res.end(JSON.stringify({ success: false, error: echoOf(style, req.headers.authorization, body) }));
      }
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    url: `https://127.0.0.1:${(server.address() as AddressInfo).port}`,
    fingerprintSha256: cert.fingerprintSha256,
    bodies: () => [...bodies],
    close: () => server.close(),
  };
}

function echoOf(style: EchoStyle, authorization: string | undefined, body: string): string {
  if (style === 'raw') return `bad request from ${authorization ?? ''}; body was ${body}`;
  if (style === 'encoded') return encodedEcho(authorization, body);
  if (style === 'body-base64') return `${Buffer.from(body).toString('base64')} is not a valid request`;
  if (style === 'body-hex') return `${Buffer.from(body).toString('hex')} is not a valid request`;
  if (style === 'body-url') return `${encodeURIComponent(body)} is not a valid request`;
  const fields = Object.entries(parseObject(body)).filter(
    (e): e is [string, string] => typeof e[1] === 'string' && /pass/.test(e[0]),
  );
  if (style === 'shifted-base64')
    return `refused ${fields.map(([k, v]) => `${k}: ${shiftedBase64(v, 'x')} or ${shiftedBase64(v, 'xy')}`).join(' ')}`;
  if (style === 'zero-width') return `refused ${fields.map(([k, v]) => `${k}: ${[...v].join('\u200b')}`).join(' ')}`;
  return `refused ${'.'.repeat(460)} ${fields.map(([k, v]) => `${k}=${v}`).join(' ')}`;
}

/** The value's base64 after `lead`: none of its characters line up with the value's own base64. */
export function shiftedBase64(value: string, lead: string): string {
  return Buffer.from(lead + value).toString('base64');
}

function encodedEcho(authorization: string | undefined, body: string): string {
  // Secrets first: the client keeps only the start of a long device sentence.
  const fields = Object.entries(parseObject(body))
    .filter((e): e is [string, string] => typeof e[1] === 'string')
    .sort(([a], [b]) => Number(/pass/.test(b)) - Number(/pass/.test(a)));
  const echoed = fields.map(
    ([k, v]) => `${k}=${Buffer.from(v).toString('base64')}|${Buffer.from(v).toString('hex')}|${encodeURIComponent(v)}`,
  );
  return `refused (${authorization ?? ''}): ${echoed.join(' ')}`;
}

function parseObject(text: string): Record<string, unknown> {
  try {
    const value: unknown = JSON.parse(text);
    return value !== null && typeof value === 'object' ? (value as Record<string, unknown>) : {};
  } catch {
    return {};
  }
}
