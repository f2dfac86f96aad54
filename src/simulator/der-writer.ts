/**
 * DER encoding of the few ASN.1 types a self-issued certificate needs (self-signed-certificate.ts).
 * Each function returns one complete node; constructed ones take their children's encodings.
 */

function lengthOctets(length: number): Buffer {
  if (length < 0x80) return Buffer.from([length]);
  const bytes: number[] = [];
  for (let rest = length; rest > 0; rest = Math.floor(rest / 256)) bytes.unshift(rest & 0xff);
  return Buffer.from([0x80 | bytes.length, ...bytes]);
}

/** One node: identifier octet (class, constructed bit, tag number below 31), length, content. */
export function node(identifier: number, content: Uint8Array): Buffer {
  return Buffer.concat([Buffer.from([identifier]), lengthOctets(content.length), content]);
}

export const sequence = (items: readonly Uint8Array[]): Buffer => node(0x30, Buffer.concat(items));
export const set = (items: readonly Uint8Array[]): Buffer => node(0x31, Buffer.concat(items));
/** Big-endian two's complement as given: the caller keeps a positive value's top bit clear. */
export const integer = (bytes: Uint8Array): Buffer => node(0x02, bytes);
export const octetString = (bytes: Uint8Array): Buffer => node(0x04, bytes);
/** A BIT STRING of whole bytes: the first content octet says 0 unused bits. */
export const bitString = (bytes: Uint8Array): Buffer => node(0x03, Buffer.concat([Buffer.from([0]), bytes]));
export const utf8String = (text: string): Buffer => node(0x0c, Buffer.from(text, 'utf8'));
/** `[tag] EXPLICIT`: a constructed context-specific node around its children. */
export const explicit = (tag: number, items: readonly Uint8Array[]): Buffer => node(0xa0 | tag, Buffer.concat(items));
/** `[tag] IMPLICIT` of a primitive type, e.g. a GeneralName's iPAddress [7] or dNSName [2]. */
export const implicitPrimitive = (tag: number, bytes: Uint8Array): Buffer => node(0x80 | tag, bytes);

export function objectIdentifier(dotted: string): Buffer {
  const arcs = dotted.split('.').map(Number);
  const [first = 0, second = 0, ...rest] = arcs;
  const out: number[] = [];
  for (const arc of [first * 40 + second, ...rest]) {
    const septets: number[] = [arc & 0x7f];
    for (let value = Math.floor(arc / 128); value > 0; value = Math.floor(value / 128))
      septets.unshift((value & 0x7f) | 0x80);
    out.push(...septets);
  }
  return node(0x06, Buffer.from(out));
}

/** UTCTime covers 1950-2049; later dates must be GeneralizedTime (RFC 5280 4.1.2.5). */
export function time(date: Date): Buffer {
  const iso = date.toISOString(); // 2025-01-31T12:34:56.789Z
  const digits = `${iso.slice(0, 4)}${iso.slice(5, 7)}${iso.slice(8, 10)}${iso.slice(11, 13)}${iso.slice(14, 16)}${iso.slice(17, 19)}Z`;
  return date.getUTCFullYear() < 2050
    ? node(0x17, Buffer.from(digits.slice(2), 'ascii'))
    : node(0x18, Buffer.from(digits, 'ascii'));
}
