import * as asn1js from 'asn1js';
import { AsnParser } from '@peculiar/asn1-schema';

/**
 * Reading what the device looks at in uploaded files, through asn1js and @peculiar/asn1-schema:
 * DER, or BER as some PKCS#12 writers produce it (indefinite lengths, OCTET STRINGs in pieces).
 * Nothing here throws: bytes that are not what is asked for give undefined.
 */

/**
 * A guard against hostile input: deeper than any certificate, key or PFX nests, and room for a
 * PFX with a long chain (a certificate is about a hundred nodes). OCTET and BIT STRING contents
 * are not read as embedded ASN.1 on the way: each reader opens the ones it needs, so a key or a
 * signature that happens to look like ASN.1 costs nothing and counts for nothing.
 */
const LIMITS = { maxDepth: 32, maxNodes: 100_000, parseEmbedded: false } as const;

/** Exactly one object filling all of `bytes`; undefined for trailing data or anything unreadable. */
export function readBer(bytes: Uint8Array): asn1js.AsnType | undefined {
  const parsed = readPrefix(bytes);
  return parsed !== undefined && parsed.length === bytes.length ? parsed.object : undefined;
}

/** The bytes of the first object of `bytes`, whatever follows it; undefined when there is none. */
export function firstObjectBytes(bytes: Uint8Array): Buffer | undefined {
  const parsed = readPrefix(bytes);
  return parsed === undefined ? undefined : Buffer.from(bytes.buffer, bytes.byteOffset, parsed.length);
}

/** `bytes` (one whole object) read as the schema `type`; undefined when they do not fit it. */
export function parseAs<T>(bytes: Uint8Array | ArrayBuffer, type: new () => T): T | undefined {
  const view = bytes instanceof Uint8Array ? bytes : new Uint8Array(bytes);
  const object = readBer(view);
  if (object === undefined) return undefined;
  try {
    return AsnParser.fromASN(object, type, { berOptions: LIMITS });
  } catch {
    return undefined;
  }
}

/**
 * The octets of an encoded OCTET STRING, primitive or (BER) constructed from pieces, which
 * asn1js joins; undefined when `bytes` are not one OCTET STRING.
 */
export function octetStringValue(bytes: Uint8Array | ArrayBuffer): Buffer | undefined {
  const object = readBer(bytes instanceof Uint8Array ? bytes : new Uint8Array(bytes));
  return object instanceof asn1js.OctetString ? Buffer.from(object.getValue()) : undefined;
}

/** How many items the SEQUENCE `bytes` holds; undefined when they are not one SEQUENCE. */
export function sequenceLength(bytes: Uint8Array): number | undefined {
  const object = readBer(bytes);
  return object instanceof asn1js.Sequence ? object.valueBlock.value.length : undefined;
}

/** Whether `bytes` are one SEQUENCE, of anything. */
export function isSequence(bytes: Uint8Array | ArrayBuffer): boolean {
  return readBer(bytes instanceof Uint8Array ? bytes : new Uint8Array(bytes)) instanceof asn1js.Sequence;
}

function readPrefix(bytes: Uint8Array): { object: asn1js.AsnType; length: number } | undefined {
  if (bytes.length === 0) return undefined;
  try {
    const { offset, result } = asn1js.fromBER(bytes, LIMITS);
    return result.error === '' && offset > 0 ? { object: result, length: offset } : undefined;
  } catch {
    return undefined;
  }
}
