/**
 * A small ASN.1 reader for what the device looks at in uploaded files: the outer structure of a
 * DER (or BER, as some PKCS#12 writers produce) certificate, key or PFX, and the inside of a PFX
 * when the model 802.1X backend opens one. Only what those need: low tag numbers, definite and
 * indefinite lengths. The simulator's own, so that it can disagree with the agent's readers.
 */

export const Tag = {
  Integer: 0x02,
  BitString: 0x03,
  OctetString: 0x04,
  Null: 0x05,
  Oid: 0x06,
  Sequence: 0x10,
  Set: 0x11,
} as const;

export const TagClass = { Universal: 0, Application: 1, Context: 2, Private: 3 } as const;
export type TagClass = (typeof TagClass)[keyof typeof TagClass];

export interface DerNode {
  tagClass: TagClass;
  constructed: boolean;
  /** The tag number within its class (Tag.* for universal ones). */
  tag: number;
  /** The content octets (for a constructed node: its children's encodings, end-of-contents excluded). */
  content: Buffer;
  /** For a constructed node, its children; empty for a primitive one. */
  children: DerNode[];
  /** Bytes the node occupies, header and end-of-contents included. */
  length: number;
  /** The node as it stands in the input: header, content and any end-of-contents. */
  encoding: Buffer;
}

/** Deeper than any certificate, key or PFX nests: a guard against hostile input. */
const MAX_DEPTH = 32;

/**
 * Reads exactly one node filling all of `bytes`; undefined when the bytes are not that (trailing
 * data, a length beyond the end, a high tag number, nesting deeper than MAX_DEPTH). Never throws.
 */
export function readDer(bytes: Uint8Array): DerNode | undefined {
  const buffer = Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  const node = readNode(buffer, 0, 0);
  return node !== undefined && node.length === buffer.length ? node : undefined;
}

/** Reads the first node of `bytes` and ignores what follows it; undefined when there is none. */
export function readDerPrefix(bytes: Uint8Array): DerNode | undefined {
  return readNode(Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength), 0, 0);
}

function readNode(buffer: Buffer, offset: number, depth: number): DerNode | undefined {
  if (depth > MAX_DEPTH || offset + 2 > buffer.length) return undefined;
  const first = buffer[offset] ?? 0;
  const tag = first & 0x1f;
  // Tag number 31 announces a multi-byte tag: nothing the device reads uses one.
  if (tag === 0x1f) return undefined;
  const tagClass = (first >> 6) as TagClass;
  const constructed = (first & 0x20) !== 0;
  const lengthByte = buffer[offset + 1] ?? 0;
  let header = 2;
  if (lengthByte === 0x80) {
    // Indefinite length (BER): children up to an end-of-contents marker 00 00. Constructed only.
    if (!constructed) return undefined;
    const children: DerNode[] = [];
    let at = offset + 2;
    for (;;) {
      if (at + 2 > buffer.length) return undefined;
      if (buffer[at] === 0 && buffer[at + 1] === 0) break;
      const child = readNode(buffer, at, depth + 1);
      if (child === undefined) return undefined;
      children.push(child);
      at += child.length;
    }
    const encoding = buffer.subarray(offset, at + 2);
    return {
      tagClass,
      constructed,
      tag,
      content: buffer.subarray(offset + 2, at),
      children,
      length: encoding.length,
      encoding,
    };
  }
  let length = lengthByte;
  if (lengthByte & 0x80) {
    const count = lengthByte & 0x7f;
    if (count > 4 || offset + 2 + count > buffer.length) return undefined;
    length = 0;
    for (let i = 0; i < count; i++) length = length * 256 + (buffer[offset + 2 + i] ?? 0);
    header = 2 + count;
  }
  const start = offset + header;
  const end = start + length;
  if (end > buffer.length) return undefined;
  const content = buffer.subarray(start, end);
  const children: DerNode[] = [];
  if (constructed) {
    let at = start;
    while (at < end) {
      const child = readNode(buffer.subarray(0, end), at, depth + 1);
      if (child === undefined) return undefined;
      children.push(child);
      at += child.length;
    }
  }
  return {
    tagClass,
    constructed,
    tag,
    content,
    children,
    length: end - offset,
    encoding: buffer.subarray(offset, end),
  };
}

export function isUniversal(node: DerNode | undefined, tag: number): node is DerNode {
  return node !== undefined && node.tagClass === TagClass.Universal && node.tag === tag;
}

export function isContext(node: DerNode | undefined, tag: number): node is DerNode {
  return node !== undefined && node.tagClass === TagClass.Context && node.tag === tag;
}

/** A SEQUENCE's children, or undefined when the node is not a SEQUENCE. */
export function sequenceItems(node: DerNode | undefined): DerNode[] | undefined {
  return isUniversal(node, Tag.Sequence) && node.constructed ? node.children : undefined;
}

/** An OBJECT IDENTIFIER in dotted form, or undefined. */
export function oidOf(node: DerNode | undefined): string | undefined {
  if (!isUniversal(node, Tag.Oid) || node.constructed || node.content.length === 0) return undefined;
  const bytes = node.content;
  const arcs: number[] = [];
  let value = 0;
  for (const byte of bytes) {
    value = value * 128 + (byte & 0x7f);
    if (value > Number.MAX_SAFE_INTEGER / 128) return undefined;
    if ((byte & 0x80) === 0) {
      if (arcs.length === 0) arcs.push(value < 80 ? Math.floor(value / 40) : 2, value < 80 ? value % 40 : value - 80);
      else arcs.push(value);
      value = 0;
    }
  }
  return (bytes[bytes.length - 1] ?? 0) & 0x80 ? undefined : arcs.join('.');
}

/** A small non-negative INTEGER (versions, iteration counts), or undefined. */
export function smallIntegerOf(node: DerNode | undefined): number | undefined {
  if (!isUniversal(node, Tag.Integer) || node.constructed || node.content.length === 0 || node.content.length > 6)
    return undefined;
  if ((node.content[0] ?? 0) & 0x80) return undefined;
  let value = 0;
  for (const byte of node.content) value = value * 256 + byte;
  return value;
}

/**
 * The octets of an OCTET STRING, primitive or (BER) constructed from pieces; also takes an
 * implicitly tagged one (`[0] IMPLICIT OCTET STRING`), whatever its tag, when `anyTag` is set.
 */
export function octetsOf(node: DerNode | undefined, anyTag = false): Buffer | undefined {
  if (node === undefined || (!anyTag && !isUniversal(node, Tag.OctetString))) return undefined;
  if (!node.constructed) return node.content;
  const pieces: Buffer[] = [];
  for (const child of node.children) {
    const piece = octetsOf(child);
    if (piece === undefined) return undefined;
    pieces.push(piece);
  }
  return Buffer.concat(pieces);
}
