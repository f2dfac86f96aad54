import { describe, expect, it } from 'vitest';
import { firstObjectBytes, octetStringValue, readBer, sequenceLength } from '../../src/simulator/ber.js';
import { fileKindFor } from '../../src/simulator/file-kind.js';

/**
 * The simulator's reading of uploaded DER and BER through asn1js: whole objects only, BER as some
 * PKCS#12 writers produce it, and hostile nesting refused without throwing.
 */

const hex = (text: string) => Buffer.from(text.replace(/ /g, ''), 'hex');

/** `depth` SEQUENCEs of indefinite length, each inside the one before, around a NULL. */
function nested(depth: number): Buffer {
  return Buffer.concat([Buffer.alloc(depth * 2, Buffer.from([0x30, 0x80])), hex('0500'), Buffer.alloc(depth * 2)]);
}

describe('reading BER', () => {
  it('takes one whole object, and refuses trailing data and a length beyond the end', () => {
    expect(sequenceLength(hex('3006 020101 020102'))).toBe(2);
    expect(readBer(hex('3006 020101 020102 00'))).toBeUndefined();
    expect(readBer(hex('3007 020101 020102'))).toBeUndefined();
    expect(readBer(Buffer.alloc(0))).toBeUndefined();
  });

  it('gives the first object of bytes with more after it, as OpenSSL reads a TRUSTED CERTIFICATE', () => {
    expect(firstObjectBytes(hex('3003 020101 3000'))?.toString('hex')).toBe('3003020101');
    expect(firstObjectBytes(hex('30'))).toBeUndefined();
  });

  it('joins an OCTET STRING a BER writer split into pieces, inside indefinite lengths', () => {
    expect(octetStringValue(hex('2480 04020102 040103 0000'))?.toString('hex')).toBe('010203');
    expect(octetStringValue(hex('0403 010203'))?.toString('hex')).toBe('010203');
    expect(octetStringValue(hex('3003 020101'))).toBeUndefined();
  });

  it('refuses nesting deeper than any certificate, key or PFX, without throwing', () => {
    expect(sequenceLength(nested(20))).toBe(1);
    expect(readBer(nested(40))).toBeUndefined();
    expect(readBer(nested(100_000))).toBeUndefined();
  });
});

describe("the device's check of a DER key file read through asn1-schema", () => {
  const algorithm = '300b 0609 2a864886f70d01050d'; // PBES2, parameters left out
  it('takes an EncryptedPrivateKeyInfo of exactly its two items, as OpenSSL does', () => {
    expect(fileKindFor('wpa_private_key', hex(`3010 ${algorithm} 0401aa`))).toBe('der-encrypted-private-key');
    expect(fileKindFor('wpa_private_key', hex(`3013 ${algorithm} 0401aa 020101`))).toBeUndefined();
  });
});
