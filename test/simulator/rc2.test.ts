import { describe, expect, it } from 'vitest';
import { rc2CbcDecryptRaw } from '../../src/simulator/rc2.js';

/** The simulator's own RC2 (for legacy PFX files), against the test vectors of RFC 2268, section 5. */

describe('RC2 decryption', () => {
  it.each([
    ['0000000000000000', 63, '0000000000000000', 'ebb773f993278eff'],
    ['ffffffffffffffff', 64, 'ffffffffffffffff', '278b27e42e2f0d49'],
    ['3000000000000000', 64, '1000000000000001', '30649edf9be7d2c2'],
    ['88', 64, '0000000000000000', '61a8a244adacccf0'],
    ['88bca90e90875a', 64, '0000000000000000', '6ccf4308974c267f'],
    ['88bca90e90875a7f0f79c384627bafb2', 64, '0000000000000000', '1a807d272bbe5db1'],
    ['88bca90e90875a7f0f79c384627bafb2', 128, '0000000000000000', '2269552ab0f85ca6'],
  ])('key %s with %i effective bits decrypts to the plaintext', (key, bits, plain, cipher) => {
    const out = rc2CbcDecryptRaw(Buffer.from(key, 'hex'), bits, Buffer.alloc(8), Buffer.from(cipher, 'hex'));
    expect(out.toString('hex')).toBe(plain);
  });

  it('chains blocks: CBC decryption XORs each block with the ciphertext before it', () => {
    const key = Buffer.from('88bca90e90875a', 'hex');
    const c1 = Buffer.from('6ccf4308974c267f', 'hex');
    // Block 2 is block 1's ciphertext again: it decrypts to zero XOR c1 = c1.
    const out = rc2CbcDecryptRaw(key, 64, Buffer.alloc(8), Buffer.concat([c1, c1]));
    expect(out.subarray(8).toString('hex')).toBe(c1.toString('hex'));
  });
});
