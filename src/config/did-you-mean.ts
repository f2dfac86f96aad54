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
  let best: string | undefined;
  let bestDistance = Infinity;
  const read = readsAs(word);
  for (const candidate of candidates) {
    const distance = editDistance(read, readsAs(candidate));
    if (distance < bestDistance) {
      best = candidate;
      bestDistance = distance;
    }
  }
  // Allow roughly one edit per three characters: "ipv44" -> "ipv4", not "mtu" -> "vlan".
  const allowed = Math.max(1, Math.floor(word.length / 3));
  return bestDistance <= allowed ? best : undefined;
}

/** Damerau-Levenshtein (optimal string alignment): a swapped pair of letters counts as one edit. */
function editDistance(a: string, b: string): number {
  const rows = a.length + 1;
  const cols = b.length + 1;
  const d: number[][] = Array.from({ length: rows }, (_, i) =>
    Array.from({ length: cols }, (_, j) => (i === 0 ? j : j === 0 ? i : 0)),
  );
  for (let i = 1; i < rows; i++) {
    for (let j = 1; j < cols; j++) {
      const cost = a[i - 1] === b[j - 1] ? 0 : 1;
      const row = d[i]!;
      const prev = d[i - 1]!;
      row[j] = Math.min(prev[j]! + 1, row[j - 1]! + 1, prev[j - 1]! + cost);
      if (i > 1 && j > 1 && a[i - 1] === b[j - 2] && a[i - 2] === b[j - 1]) {
        row[j] = Math.min(row[j]!, d[i - 2]![j - 2]! + 1);
      }
    }
  }
  return d[a.length]![b.length]!;
}
