/**
 * RC2 decryption in CBC mode (RFC 2268). Needed for one thing only: the certificates of a legacy
 * PFX (`openssl pkcs12 -legacy`, and what many Windows versions export) are encrypted with
 * pbeWithSHAAnd40BitRC2-CBC, and the OpenSSL that node:crypto uses refuses RC2 unless its legacy
 * provider is loaded, which node does not do: `crypto.getCiphers()` has no rc2 (3DES it still
 * has, so that one is node's). `node --openssl-legacy-provider` would add rc2-cbc, but that is a
 * flag on the whole process, which the CLI, the agent and every test worker would then need.
 * WebCrypto has no RC2 either, and no maintained RC2-only package turned up (node-forge has one,
 * but the simulator stays off the product's libraries). wpa_supplicant on a device loads the
 * legacy provider and reads such a file, so the simulator's model of it must too.
 */

// The RC2 "PITABLE": a permutation of 0..255 derived from the digits of pi (RFC 2268, section 2).
const PITABLE = Buffer.from(
  [
    'd9 78 f9 c4 19 dd b5 ed 28 e9 fd 79 4a a0 d8 9d',
    'c6 7e 37 83 2b 76 53 8e 62 4c 64 88 44 8b fb a2',
    '17 9a 59 f5 87 b3 4f 13 61 45 6d 8d 09 81 7d 32',
    'bd 8f 40 eb 86 b7 7b 0b f0 95 21 22 5c 6b 4e 82',
    '54 d6 65 93 ce 60 b2 1c 73 56 c0 14 a7 8c f1 dc',
    '12 75 ca 1f 3b be e4 d1 42 3d d4 30 a3 3c b6 26',
    '6f bf 0e da 46 69 07 57 27 f2 1d 9b bc 94 43 03',
    'f8 11 c7 f6 90 ef 3e e7 06 c3 d5 2f c8 66 1e d7',
    '08 e8 ea de 80 52 ee f7 84 aa 72 ac 35 4d 6a 2a',
    '96 1a d2 71 5a 15 49 74 4b 9f d0 5e 04 18 a4 ec',
    'c2 e0 41 6e 0f 51 cb cc 24 91 af 50 a1 f4 70 39',
    '99 7c 3a 85 23 b8 b4 7a fc 02 36 5b 25 55 97 31',
    '2d 5d fa 98 e3 8a 92 ae 05 df 29 10 67 6c ba c9',
    'd3 00 e6 cf e1 9e a8 2c 63 16 01 3f 58 e2 89 a9',
    '0d 38 34 1b ab 33 ff b0 bb 48 0c 5f b9 b1 cd 2e',
    'c5 f3 db 47 e5 a5 9c 77 0a a6 20 68 fe 7f c1 ad',
  ]
    .join(' ')
    .replace(/ /g, ''),
  'hex',
);

/** The 64 16-bit subkeys of RFC 2268 section 2, for a key with `effectiveBits` effective bits. */
function expandKey(key: Uint8Array, effectiveBits: number): Uint16Array {
  const t = key.length;
  if (t < 1 || t > 128 || effectiveBits < 1 || effectiveBits > 1024)
    throw new RangeError('RC2 key or effective key length out of range');
  const l = new Uint8Array(128);
  l.set(key);
  for (let i = t; i < 128; i++) l[i] = PITABLE[((l[i - 1] ?? 0) + (l[i - t] ?? 0)) & 0xff] ?? 0;
  const t8 = Math.ceil(effectiveBits / 8);
  const tm = 0xff >> (8 * t8 - effectiveBits);
  l[128 - t8] = PITABLE[(l[128 - t8] ?? 0) & tm] ?? 0;
  for (let i = 127 - t8; i >= 0; i--) l[i] = PITABLE[(l[i + 1] ?? 0) ^ (l[i + t8] ?? 0)] ?? 0;
  const k = new Uint16Array(64);
  for (let i = 0; i < 64; i++) k[i] = (l[2 * i] ?? 0) | ((l[2 * i + 1] ?? 0) << 8);
  return k;
}

const SHIFT = [1, 2, 3, 5] as const;

/** Decrypts one 8-byte block in place (RFC 2268 section 4). */
function decryptBlock(k: Uint16Array, block: Uint8Array): void {
  const r = new Uint16Array(4);
  for (let i = 0; i < 4; i++) r[i] = (block[2 * i] ?? 0) | ((block[2 * i + 1] ?? 0) << 8);
  let j = 63;
  const word = (i: number) => r[(i + 4) % 4] ?? 0;
  const unmix = () => {
    for (let i = 3; i >= 0; i--) {
      const s = SHIFT[i] ?? 0;
      const v = word(i);
      r[i] = ((v >>> s) | (v << (16 - s))) & 0xffff;
      r[i] = (word(i) - (k[j] ?? 0) - (word(i - 1) & word(i - 2)) - (~word(i - 1) & word(i - 3))) & 0xffff;
      j--;
    }
  };
  const unmash = () => {
    for (let i = 3; i >= 0; i--) r[i] = (word(i) - (k[word(i - 1) & 63] ?? 0)) & 0xffff;
  };
  for (let n = 0; n < 5; n++) unmix();
  unmash();
  for (let n = 0; n < 6; n++) unmix();
  unmash();
  for (let n = 0; n < 5; n++) unmix();
  for (let i = 0; i < 4; i++) {
    block[2 * i] = (r[i] ?? 0) & 0xff;
    block[2 * i + 1] = (r[i] ?? 0) >> 8;
  }
}

/** RC2-CBC without touching the padding: the caller strips and checks it. Throws on a bad length. */
export function rc2CbcDecryptRaw(key: Uint8Array, effectiveBits: number, iv: Uint8Array, data: Uint8Array): Buffer {
  if (iv.length !== 8 || data.length % 8 !== 0)
    throw new RangeError('RC2-CBC needs an 8-byte IV and whole 8-byte blocks');
  const k = expandKey(key, effectiveBits);
  const out = Buffer.alloc(data.length);
  let previous: Uint8Array = iv;
  for (let at = 0; at < data.length; at += 8) {
    const cipher = data.subarray(at, at + 8);
    const block = Uint8Array.from(cipher);
    decryptBlock(k, block);
    for (let i = 0; i < 8; i++) out[at + i] = (block[i] ?? 0) ^ (previous[i] ?? 0);
    previous = cipher;
  }
  return out;
}
