import { describe, expect, it } from 'vitest';
import { closestWordFinder, didYouMean, readsAs } from '../../src/config/did-you-mean.js';

/** The plain definition: the whole table, every candidate compared, the first closest kept. */
function referenceDistance(a: string, b: string): number {
  const d = Array.from({ length: a.length + 1 }, (_, i) =>
    Array.from({ length: b.length + 1 }, (_, j) => (i === 0 ? j : j === 0 ? i : 0)),
  );
  for (let i = 1; i <= a.length; i++) {
    for (let j = 1; j <= b.length; j++) {
      const cost = a[i - 1] === b[j - 1] ? 0 : 1;
      d[i]![j] = Math.min(d[i - 1]![j]! + 1, d[i]![j - 1]! + 1, d[i - 1]![j - 1]! + cost);
      if (i > 1 && j > 1 && a[i - 1] === b[j - 2] && a[i - 2] === b[j - 1])
        d[i]![j] = Math.min(d[i]![j]!, d[i - 2]![j - 2]! + 1);
    }
  }
  return d[a.length]![b.length]!;
}

function referenceDidYouMean(word: string, candidates: readonly string[]): string | undefined {
  let best: string | undefined;
  let bestDistance = Infinity;
  for (const candidate of candidates) {
    const distance = referenceDistance(readsAs(word), readsAs(candidate));
    if (distance < bestDistance) {
      best = candidate;
      bestDistance = distance;
    }
  }
  return bestDistance <= Math.max(1, Math.floor(word.length / 3)) ? best : undefined;
}

const KEYS = ['password', 'password_file', 'passphrase', 'wpa_password', 'psk', 'ipv4', 'ipv6', 'vlan', 'mtu', 'dns'];

describe('didYouMean', () => {
  it('points a misspelt word at the closest known one, and a far one at nothing', () => {
    expect(didYouMean('ipv44', KEYS)).toBe('ipv4');
    expect(didYouMean('pasword', KEYS)).toBe('password');
    expect(didYouMean('passwrod', KEYS)).toBe('password'); // a swapped pair is one edit
    expect(didYouMean('pаsswоrd', KEYS)).toBe('password'); // Cyrillic а and о
    expect(didYouMean('pass\u200bword', KEYS)).toBe('password');
    expect(didYouMean('mut', ['mtu', 'vlan'])).toBe('mtu'); // one edit allowed in three letters: the swap
    expect(didYouMean('ba', ['ab'])).toBe('ab');
    expect(didYouMean('mtu', ['vlan'])).toBeUndefined();
    expect(didYouMean('gateway', KEYS)).toBeUndefined();
    expect(didYouMean('', KEYS)).toBeUndefined();
  });

  it('answers as the plain definition does for many words, ties included (first candidate wins)', () => {
    // A fixed pseudo-random sequence: the same words on every run.
    let seed = 12345;
    const next = (n: number): number => {
      seed = (seed * 1103515245 + 12345) % 2 ** 31;
      return seed % n;
    };
    const alphabet = 'abdeilnoprsuvw46_а';
    const mutate = (word: string): string => {
      const chars = [...word];
      for (let edits = next(4); edits > 0; edits--) {
        const at = next(chars.length + 1);
        const op = next(4);
        if (op === 0) chars.splice(at, 0, alphabet[next(alphabet.length)]!);
        else if (op === 1) chars.splice(at, 1);
        else if (op === 2) chars[at] = alphabet[next(alphabet.length)]!;
        else if (at + 1 < chars.length) [chars[at], chars[at + 1]] = [chars[at + 1]!, chars[at]!];
      }
      return chars.join('');
    };
    const candidates = [...KEYS, 'ab', 'ba', 'abc', 'acb'];
    const find = closestWordFinder(candidates);
    let suggested = 0;
    for (let i = 0; i < 3000; i++) {
      const word =
        next(3) === 0
          ? Array.from({ length: 1 + next(12) }, () => alphabet[next(alphabet.length)]).join('')
          : mutate(candidates[next(candidates.length)]!);
      const expected = referenceDidYouMean(word, candidates);
      expect(find(word), word).toBe(expected);
      expect(didYouMean(word, candidates), word).toBe(expected);
      if (expected !== undefined) suggested++;
    }
    // Both outcomes were exercised, not only one.
    expect(suggested).toBeGreaterThan(500);
    expect(suggested).toBeLessThan(2900);
  });
});
