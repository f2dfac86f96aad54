import { describe, expect, it } from 'vitest';
import { encodeMultipart, type FilePart } from '../../src/client/multipart-body.js';

/**
 * The upload's multipart body, read back by a real multipart/form-data parser (Node's own
 * Response.formData(), which is undici's, as the simulated device reads it), and against what
 * undici's FormData writes for the same files: the same fields, file names and bytes.
 */

interface ReadPart {
  name: string;
  filename: string;
  type: string;
  bytes: number[];
}

async function readBack(bytes: Uint8Array, contentType: string): Promise<ReadPart[]> {
  const form = await new Response(bytes, { headers: { 'content-type': contentType } }).formData();
  const out: ReadPart[] = [];
  for (const [name, value] of form.entries()) {
    if (typeof value === 'string') throw new Error(`${name}: a text field, not a file`);
    out.push({ name, filename: value.name, type: value.type, bytes: [...new Uint8Array(await value.arrayBuffer())] });
  }
  return out;
}

async function undiciEncoding(parts: readonly FilePart[]): Promise<ReadPart[]> {
  const form = new FormData();
  for (const part of parts) form.append(part.name, new File([part.bytes], part.filename));
  const encoded = new Response(form);
  return readBack(new Uint8Array(await encoded.arrayBuffer()), encoded.headers.get('content-type') ?? '');
}

const PEM = Buffer.from('-----BEGIN CERTIFICATE-----\r\nMIIB\n-----END CERTIFICATE-----\n', 'latin1');
/** Every byte value, CR LF pairs and a line that starts like a boundary. */
const BINARY = Buffer.concat([
  Buffer.from(Array.from({ length: 256 }, (_, i) => i)),
  Buffer.from('\r\n--\r\n------mpprov-\r\n--', 'latin1'),
]);

describe('the upload body', () => {
  it('reads back as the files it was made of, as undici would have encoded them', async () => {
    const parts: FilePart[] = [
      { name: 'wpa_ca_cert', filename: 'a1b2c3d4-radius-ca.pem', bytes: PEM },
      { name: 'wpa_client_cert', filename: 'client.der', bytes: BINARY },
      { name: 'wpa_private_key', filename: 'empty.key', bytes: new Uint8Array(0) },
    ];
    const { bytes, contentType } = encodeMultipart(parts);
    expect(contentType).toMatch(/^multipart\/form-data; boundary=----mpprov-[0-9a-f]{32}$/);
    const read = await readBack(bytes, contentType);
    expect(read).toEqual(await undiciEncoding(parts));
    expect(
      read.map((p) => [
        p.name,
        p.filename,
        p.type,
        Buffer.from(p.bytes).equals(Buffer.from(parts.find((q) => q.name === p.name)?.bytes ?? [])),
      ]),
    ).toEqual([
      ['wpa_ca_cert', 'a1b2c3d4-radius-ca.pem', 'application/octet-stream', true],
      ['wpa_client_cert', 'client.der', 'application/octet-stream', true],
      ['wpa_private_key', 'empty.key', 'application/octet-stream', true],
    ]);
  });

  it('a quote, CR or LF in a name cannot end its header or forge another part', async () => {
    const parts: FilePart[] = [
      { name: 'wpa_ca_cert', filename: 'x"; name="other\r\nContent-Type: text/html\r\n\r\nforged.pem', bytes: PEM },
    ];
    const { bytes, contentType } = encodeMultipart(parts);
    const read = await readBack(bytes, contentType);
    expect(read).toEqual(await undiciEncoding(parts));
    expect(read).toHaveLength(1);
    expect(read[0]?.name).toBe('wpa_ca_cert');
    // Written escaped (%22, %0D, %0A), read back as the name it was.
    expect(read[0]?.filename).toBe(parts[0]?.filename);
    expect(Buffer.from(bytes).toString('latin1')).toContain(
      'filename="x%22; name=%22other%0D%0AContent-Type: text/html',
    );
    expect(Buffer.from(read[0]?.bytes ?? []).equals(PEM)).toBe(true);
  });

  it('a new boundary for every body', () => {
    const boundaries = new Set(
      Array.from({ length: 50 }, () => encodeMultipart([{ name: 'a', filename: 'b', bytes: PEM }]).contentType),
    );
    expect(boundaries.size).toBe(50);
  });
});
