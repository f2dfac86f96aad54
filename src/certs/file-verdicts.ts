import { randomBytes } from 'node:crypto';
import { type KeyPath, Severity, type UnplacedProblem, formatKeyPath } from '../core/problem.js';
import type { Secret } from '../core/secret.js';

/** The most problems one file (at one key) adds to a report; the rest are counted in one more. */
const MAX_PROBLEMS_PER_FILE = 20;

interface Verdict {
  problems: UnplacedProblem[];
  /** Where the same file (or the same set of files) is named again, in the file's order. */
  others: KeyPath[];
  /** What the check learnt beside its problems, the same for every reference. */
  facts: unknown;
}

/**
 * The certificate checks' verdicts for one load of a stick, one per distinct file: a
 * configuration may name the same 1 MiB bundle of a thousand certificates at a thousand keys. The
 * read session hands every spelling of a file the same bytes, so those bytes are its identity;
 * the file is judged at its first reference, its problems are said once, there, and the other
 * references are named after them. Judged again at each key, that was minutes of one core and
 * a million warning lines.
 */
export class FileVerdicts {
  readonly #verdicts = new Map<string, Verdict>();
  readonly #ids = new WeakMap<object, number>();
  #nextId = 1;
  /** A fresh key per load, so the hashes below mean nothing outside this object, which never shows them. */
  readonly #hashKey = randomBytes(32);
  readonly #passwords = new Map<string, object>();

  /**
   * One identity object per password value: every block of a configuration holds its own Secret,
   * so keyed by the object, the same password in four blocks was four verdicts and four key
   * derivations. Only a keyed hash of the value is kept, in memory.
   */
  passwordIdentity(secret: Secret | undefined): object | undefined {
    if (secret === undefined) return undefined;
    const hash = secret.keyedHash(this.#hashKey, ['credential-set verdict']);
    let identity = this.#passwords.get(hash);
    if (identity === undefined) this.#passwords.set(hash, (identity = {}));
    return identity;
  }

  /**
   * Judges what `parts` identify (the bytes of each file, a password) with `judge`, at its first
   * reference only; at a later reference `at` is recorded and the first verdict's facts given.
   */
  judge<T>(
    kind: string,
    parts: readonly (object | undefined)[],
    at: KeyPath,
    judge: () => { problems: UnplacedProblem[]; facts: T },
  ): { facts: T; first: boolean } {
    const key = `${kind}:${parts.map((part) => this.#idOf(part)).join(',')}`;
    const known = this.#verdicts.get(key);
    if (known !== undefined) {
      known.others.push(at);
      return { facts: known.facts as T, first: false };
    }
    const { problems, facts } = judge();
    this.#verdicts.set(key, { problems: capPerKey(problems), others: [], facts });
    return { facts, first: true };
  }

  /** Every verdict's problems, each once, saying where else its file is named. */
  problems(): UnplacedProblem[] {
    return [...this.#verdicts.values()].flatMap(({ problems, others }) => {
      const first = others[0];
      if (first === undefined) return problems;
      const rest = others.length - 1;
      const also = ` (also named at ${formatKeyPath(first)}${rest > 0 ? ` and ${rest} other place${rest === 1 ? '' : 's'}` : ''})`;
      return problems.map((p) => ({ ...p, message: `${p.message}${also}` }));
    });
  }

  #idOf(part: object | undefined): string {
    if (part === undefined) return '-';
    let id = this.#ids.get(part);
    if (id === undefined) this.#ids.set(part, (id = this.#nextId++));
    return String(id);
  }
}

/** At most MAX_PROBLEMS_PER_FILE problems at each key; one more problem counts the rest. */
function capPerKey(problems: UnplacedProblem[]): UnplacedProblem[] {
  const byKey = new Map<string, UnplacedProblem[]>();
  for (const problem of problems) {
    const key = formatKeyPath(problem.path);
    const list = byKey.get(key);
    if (list === undefined) byKey.set(key, [problem]);
    else list.push(problem);
  }
  const out: UnplacedProblem[] = [];
  for (const list of byKey.values()) {
    out.push(...list.slice(0, MAX_PROBLEMS_PER_FILE));
    const dropped = list.slice(MAX_PROBLEMS_PER_FILE);
    const first = dropped[0];
    if (first === undefined) continue;
    const errors = dropped.filter((p) => p.severity === Severity.Error).length;
    out.push({
      severity: errors > 0 ? Severity.Error : Severity.Warning,
      path: first.path,
      message: `and ${dropped.length} more problem${dropped.length === 1 ? '' : 's'} in this file (${errors} error${errors === 1 ? '' : 's'}, ${dropped.length - errors} warning${dropped.length - errors === 1 ? '' : 's'}), not listed one by one`,
      hint: 'fix the problems listed above, then validate again',
    });
  }
  return out;
}
