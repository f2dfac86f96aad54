import { parseDocument } from 'yaml';
import { z } from 'zod';

/**
 * `mpprov.policy.yaml` (docs/stick-format.md, "Sticks that expire"): what the signer says about
 * the stick's use beside its content. Today one key, `not_after`. It counts only when the
 * signature covers it; the verdict decides that, this file only reads and writes the bytes.
 */
export const POLICY_NAME = 'mpprov.policy.yaml';

/** A policy file is one line; anything near this size is not one. */
export const POLICY_MAX_BYTES = 4096;

const DATE = /^(\d{4})-(\d{2})-(\d{2})$/;
const RFC3339 = /^(\d{4})-(\d{2})-(\d{2})[Tt ](\d{2}):(\d{2}):(\d{2})(\.\d{1,9})?([Zz]|[+-]\d{2}:\d{2})$/;

/** A stick's last moment of use: the instant, and the text the signer wrote (shown as is). */
export interface NotAfter {
  instant: Date;
  text: string;
}

// Unknown keys are refused, not ignored: a signer's restriction this build cannot read must not be dropped.
const PolicyFile = z.strictObject({ not_after: z.string() });

/**
 * Reads `not_after` as a date (valid to the end of that day, UTC) or an RFC 3339 time. Undefined
 * when the text is neither, or names a day that does not exist (2026-02-30).
 */
export function parseNotAfter(text: string): NotAfter | undefined {
  const date = DATE.exec(text);
  if (date !== null) {
    const [y, m, d] = [Number(date[1]), Number(date[2]), Number(date[3])];
    const end = new Date(Date.UTC(y, m - 1, d, 23, 59, 59, 999));
    if (end.getUTCFullYear() !== y || end.getUTCMonth() !== m - 1 || end.getUTCDate() !== d) return undefined;
    return { instant: end, text };
  }
  const time = RFC3339.exec(text);
  if (time === null) return undefined;
  const [y, m, d, hh, mm, ss] = time.slice(1, 7).map(Number) as [number, number, number, number, number, number];
  const day = new Date(Date.UTC(y, m - 1, d));
  if (day.getUTCMonth() !== m - 1 || day.getUTCDate() !== d || hh > 23 || mm > 59 || ss > 59) return undefined;
  const instant = new Date(text);
  return Number.isNaN(instant.getTime()) ? undefined : { instant, text };
}

export type PolicyRead = { ok: true; notAfter: NotAfter } | { ok: false; message: string; hint: string };

const POLICY_HINT = `${POLICY_NAME} holds one line, not_after: YYYY-MM-DD (mpprov sign --valid-until writes it)`;

/** The policy file's bytes, read as hostile text: capped, YAML, one known key. */
export function parsePolicy(bytes: Buffer): PolicyRead {
  if (bytes.length > POLICY_MAX_BYTES)
    return { ok: false, message: `the file is ${bytes.length} bytes; the limit is 4 KiB`, hint: POLICY_HINT };
  let text: string;
  try {
    text = new TextDecoder('utf-8', { fatal: true }).decode(bytes);
  } catch {
    return { ok: false, message: 'the file is not UTF-8 text', hint: POLICY_HINT };
  }
  const doc = parseDocument(text, { uniqueKeys: true, logLevel: 'error' });
  if (doc.errors.length > 0) return { ok: false, message: 'the file is not valid YAML', hint: POLICY_HINT };
  const parsed = PolicyFile.safeParse(policyData(doc));
  if (!parsed.success)
    return { ok: false, message: 'the file must hold exactly one key, not_after, with a date', hint: POLICY_HINT };
  const notAfter = parseNotAfter(parsed.data.not_after);
  if (notAfter === undefined)
    return {
      ok: false,
      // Only a value that passed the pattern would be quoted; this one did not, so it is not shown.
      message: 'not_after is neither a date (YYYY-MM-DD) nor an RFC 3339 time',
      hint: POLICY_HINT,
    };
  return { ok: true, notAfter };
}

/**
 * The document as data, resolving no alias: a one-line file has no use for one, and the library
 * throws at the first alias it is told not to resolve, so such a file is simply not a policy.
 */
function policyData(doc: ReturnType<typeof parseDocument>): unknown {
  try {
    return doc.toJS({ maxAliasCount: 0 });
  } catch {
    return undefined;
  }
}

/** The policy file as `--valid-until` writes it: the same bytes for the same date. */
export function formatPolicy(notAfter: NotAfter): Buffer {
  return Buffer.from(`not_after: ${notAfter.text}\n`, 'utf8');
}

/** Whether the stick may no longer be used at `now`. */
export function hasExpired(notAfter: NotAfter, now: Date): boolean {
  return now.getTime() > notAfter.instant.getTime();
}

/** The date as a sentence names it: a plain date is the end of that day in UTC. */
export function describeNotAfter(notAfter: NotAfter): string {
  return DATE.test(notAfter.text) ? `${notAfter.text} (end of day, UTC)` : notAfter.text;
}
