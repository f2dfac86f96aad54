/**
 * Letters of other scripts drawn like Latin ones: `pаsswоrd` with a Cyrillic а and о is read as
 * `password` by a person, so it is compared as one. Full-width and other compatibility forms
 * (`ｐassword`) are folded by NFKC before this.
 */
const LOOKALIKES: Readonly<Record<string, string>> = {
  // Cyrillic
  а: 'a',
  в: 'b',
  е: 'e',
  ё: 'e',
  һ: 'h',
  н: 'h',
  і: 'i',
  ї: 'i',
  ј: 'j',
  к: 'k',
  м: 'm',
  о: 'o',
  р: 'p',
  ԛ: 'q',
  ѕ: 's',
  т: 't',
  с: 'c',
  у: 'y',
  х: 'x',
  ԁ: 'd',
  ԝ: 'w',
  // Greek
  α: 'a',
  ε: 'e',
  ι: 'i',
  κ: 'k',
  ν: 'v',
  ο: 'o',
  ρ: 'p',
  τ: 't',
  υ: 'u',
  χ: 'x',
};

/**
 * Characters a terminal or editor draws as nothing (zero-width space and joiners, the soft hyphen,
 * tag characters, variation selectors, bidi marks): `pass\u200bword` reads as `password`.
 */
const INVISIBLE = /\p{Default_Ignorable_Code_Point}/gu;

/**
 * How a word reads to a person: invisible characters dropped, compatibility forms folded,
 * look-alike letters as Latin, lower case.
 */
export function readsAs(word: string): string {
  let out = '';
  for (const char of word.replace(INVISIBLE, '').normalize('NFKC').toLowerCase()) out += LOOKALIKES[char] ?? char;
  return out;
}

/** Suggests the closest known word for a misspelt key or value, or nothing when none is close. */
export function didYouMean(word: string, candidates: readonly string[]): string | undefined {
  return closestWordFinder(candidates)(word);
}

/**
 * didYouMean against one list for many words (every key of a file): each candidate is read once,
 * and one whose length alone puts it out of reach is not compared (the distance is at least the
 * difference in length). The same answers: the first closest candidate, when close enough.
 */
export function closestWordFinder(candidates: readonly string[]): (word: string) => string | undefined {
  const readings = candidates.map((candidate) => ({ candidate, reading: readsAs(candidate) }));
  return (word) => {
    // Allow roughly one edit per three characters: "ipv44" -> "ipv4", not "mtu" -> "vlan".
    const allowed = Math.max(1, Math.floor(word.length / 3));
    const read = readsAs(word);
    let best: string | undefined;
    let bestDistance = Infinity;
    for (const { candidate, reading } of readings) {
      if (Math.abs(reading.length - read.length) > allowed) continue;
      const distance = editDistance(read, reading);
      if (distance < bestDistance) {
        best = candidate;
        bestDistance = distance;
      }
    }
    return bestDistance <= allowed ? best : undefined;
  };
}

/** Damerau-Levenshtein (optimal string alignment): a swapped pair of letters counts as one edit. */
function editDistance(a: string, b: string): number {
  // Three rows of the table are all the recurrence reads: i - 2, i - 1 and i.
  let before = new Int32Array(b.length + 1);
  let previous = Int32Array.from({ length: b.length + 1 }, (_, j) => j);
  let row = new Int32Array(b.length + 1);
  for (let i = 1; i <= a.length; i++) {
    row[0] = i;
    for (let j = 1; j <= b.length; j++) {
      const cost = a[i - 1] === b[j - 1] ? 0 : 1;
      let best = Math.min(previous[j]! + 1, row[j - 1]! + 1, previous[j - 1]! + cost);
      if (i > 1 && j > 1 && a[i - 1] === b[j - 2] && a[i - 2] === b[j - 1]) best = Math.min(best, before[j - 2]! + 1);
      row[j] = best;
    }
    [before, previous, row] = [previous, row, before];
  }
  return previous[b.length]!;
}
