import { createHash } from 'node:crypto';
import { readdir, readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { isAlias, isCollection, isNode, isScalar, parseDocument, Scalar, visit } from 'yaml';
import { secretKeyTest, STICK_KEYS, STICK_SECRET_KEYS } from '../config/index.js';
import { formatKeyPath, type KeyPath } from '../core/problem.js';
import { visibleJson, visibleText } from '../core/visible-text.js';
import { MAX_CONFIG_BYTES, readInside } from '../ingest/index.js';
import { MANIFEST_NAME, SIGNATURE_NAME } from '../signature/index.js';
import { CONFIG_NAME } from './build-site.js';

const COLLECTION_KEY = '(a mapping or list as a key)';
const SECRET_ALIAS = '(secret)';
const secretKey = secretKeyTest(STICK_SECRET_KEYS, STICK_KEYS);

/** Keys naming a file that holds a secret: the file's content is shown only as "(changed)". */
const SECRET_FILE_KEY = /(password|passphrase|psk|secret|token)_file$/;
/** What differs between two builds of the same stick anyway: signatures aside. */
const IGNORED = new Set([MANIFEST_NAME, SIGNATURE_NAME]);

export type DiffOutcome = { ok: true; lines: string[] } | { ok: false; message: string };

/**
 * Whether a key's value is a secret written inline, never shown, only "(changed)": as the
 * validator withholds it, a secret key of the stick's schema, one misspelt, or an unknown key
 * named like a secret (`pw`, `admin_passwd`: a build edited by hand).
 */
type SecretKey = (key: string) => boolean;

/**
 * `mpprov stick diff OLD NEW`: per site and monitoring point, the keys whose values differ (as
 * `plan` shows them: a secret, or a file holding one, only as "(changed)"), files that differ,
 * sites and MPs added or removed. Every line is escaped: names and values come from a stick.
 */
export async function diffBuilds(oldDir: string, newDir: string): Promise<DiffOutcome> {
  const before = await sitesOf(oldDir);
  const after = await sitesOf(newDir);
  if (typeof before === 'string') return { ok: false, message: before };
  if (typeof after === 'string') return { ok: false, message: after };
  const lines: string[] = [];
  for (const site of [...new Set([...before, ...after])].sort()) {
    if (!after.includes(site)) lines.push(`- site ${site}: removed`);
    else if (!before.includes(site)) lines.push(`+ site ${site}: added`);
    else lines.push(...(await diffSite(site, join(oldDir, site), join(newDir, site), secretKey)));
  }
  return { ok: true, lines: lines.map(visibleText) };
}

async function sitesOf(dir: string): Promise<string[] | string> {
  try {
    const entries = await readdir(dir, { withFileTypes: true });
    return entries.filter((e) => e.isDirectory() && !e.name.startsWith('.')).map((e) => e.name);
  } catch (error) {
    return `${dir} cannot be read (${(error as NodeJS.ErrnoException).code ?? 'error'}): give two --out folders of mpprov stick build`;
  }
}

type Mp = Record<string, unknown>;

/** The MPs of a build's mpprov.yaml, or why it cannot be read: a FIFO or a link to /dev/zero never holds the diff. */
async function readConfig(dir: string): Promise<Mp[] | string> {
  const read = await readInside(dir, CONFIG_NAME, {
    what: CONFIG_NAME,
    limit: MAX_CONFIG_BYTES,
    limitText: '256 KiB',
  });
  if (!read.ok) return read.message;
  try {
    const doc = parseDocument(read.bytes.toString('utf8'), { logLevel: 'error' });
    if (doc.errors.length > 0) return [];
    // A mapping or list used as a key (or an alias of one) would become its own text, secrets in
    // it included, and the diff shows keys: such a key is shown by what it is, never by what it holds.
    // An alias repeats its anchor's value wherever it stands: one of a secret's is a secret too, and
    // stays withheld under a key that names none (`description: *pw`).
    const secretAnchors = new Set<string>();
    visit(doc, {
      Pair(_, pair) {
        if (isCollection(pair.key) || isAlias(pair.key)) pair.key = new Scalar(COLLECTION_KEY);
        const key = isScalar(pair.key) ? pair.key.value : undefined;
        if (typeof key === 'string' && isNode(pair.value) && pair.value.anchor !== undefined && secretKey(key))
          secretAnchors.add(pair.value.anchor);
      },
    });
    visit(doc, { Alias: (_, alias) => (secretAnchors.has(alias.source) ? new Scalar(SECRET_ALIAS) : undefined) });
    const parsed = doc.toJS({ maxAliasCount: 100 }) as { monitoring_points?: unknown } | null;
    return Array.isArray(parsed?.monitoring_points) ? (parsed.monitoring_points as Mp[]) : [];
  } catch {
    return [];
  }
}

async function diffSite(site: string, oldDir: string, newDir: string, secretKey: SecretKey): Promise<string[]> {
  const lines: string[] = [];
  const [oldRead, newRead] = [await readConfig(oldDir), await readConfig(newDir)];
  for (const [which, read] of [
    ['old', oldRead],
    ['new', newRead],
  ] as const)
    if (typeof read === 'string') lines.push(`! ${site} (${which} build): ${read}`);
  const oldMps = typeof oldRead === 'string' ? [] : oldRead;
  const newMps = typeof newRead === 'string' ? [] : newRead;
  const byName = (mps: Mp[]) => new Map(mps.map((mp) => [String(mp.name), mp]));
  const [oldByName, newByName] = [byName(oldMps), byName(newMps)];
  for (const name of [...new Set([...oldByName.keys(), ...newByName.keys()])]) {
    const [from, to] = [oldByName.get(name), newByName.get(name)];
    if (to === undefined) lines.push(`- ${site} ${name}: removed`);
    else if (from === undefined) lines.push(`+ ${site} ${name}: added`);
    else for (const change of diffValues(from, to, [], secretKey)) lines.push(`~ ${site} ${name}: ${change}`);
  }
  // Files: by content. A file a secret key names, or anything under secrets/, only as "(changed)".
  const secretFiles = new Set<string>();
  for (const mp of [...oldMps, ...newMps]) collectSecretFiles(mp, secretFiles);
  const [oldFiles, newFiles] = [await hashes(oldDir), await hashes(newDir)];
  for (const path of [...new Set([...oldFiles.keys(), ...newFiles.keys()])].sort()) {
    if (path === CONFIG_NAME || IGNORED.has(path)) continue;
    const [a, b] = [oldFiles.get(path), newFiles.get(path)];
    if (a === b) continue;
    const secret = secretFiles.has(path) || path.startsWith('secrets/');
    const what = a === undefined ? 'added' : b === undefined ? 'removed' : secret ? '(changed)' : 'changed';
    lines.push(`~ ${site}: file ${path}: ${what}`);
  }
  return lines;
}

function diffValues(from: unknown, to: unknown, path: KeyPath, secretKey: SecretKey): string[] {
  const key = path.at(-1);
  const secret = typeof key === 'string' && secretKey(key);
  if (isRecord(from) && isRecord(to)) {
    return [...new Set([...Object.keys(from), ...Object.keys(to)])].flatMap((k) =>
      diffValues(from[k], to[k], [...path, k], secretKey),
    );
  }
  if (JSON.stringify(from) === JSON.stringify(to)) return [];
  const field = formatKeyPath(path);
  if (secret) return [`${field}: ${to === undefined ? '(removed)' : '(changed)'}`];
  return [`${field}: ${show(from, secretKey)} -> ${show(to, secretKey)}`];
}

function isRecord(value: unknown): value is Record<string, unknown> {
  return value !== null && typeof value === 'object' && !Array.isArray(value);
}

function show(value: unknown, secretKey: SecretKey): string {
  return value === undefined ? '(none)' : visibleJson(JSON.stringify(withoutSecrets(value, secretKey)));
}

/** A block or list shown whole (its type changed) still shows a secret key's value only as "(secret)". */
function withoutSecrets(value: unknown, secretKey: SecretKey): unknown {
  if (Array.isArray(value)) return value.map((item) => withoutSecrets(item, secretKey));
  if (!isRecord(value)) return value;
  return Object.fromEntries(
    Object.entries(value).map(([key, inner]) => [key, secretKey(key) ? '(secret)' : withoutSecrets(inner, secretKey)]),
  );
}

function collectSecretFiles(node: unknown, found: Set<string>): void {
  if (Array.isArray(node)) for (const item of node) collectSecretFiles(item, found);
  else if (isRecord(node))
    for (const [key, value] of Object.entries(node)) {
      if (typeof value === 'string' && (SECRET_FILE_KEY.test(key) || key === 'private_key')) found.add(value);
      else collectSecretFiles(value, found);
    }
}

async function hashes(dir: string, rel = ''): Promise<Map<string, string>> {
  const out = new Map<string, string>();
  let entries;
  try {
    entries = await readdir(join(dir, rel), { withFileTypes: true });
  } catch {
    return out;
  }
  for (const entry of entries) {
    const path = rel === '' ? entry.name : `${rel}/${entry.name}`;
    if (entry.isDirectory()) for (const [p, h] of await hashes(dir, path)) out.set(p, h);
    else if (entry.isFile())
      out.set(
        path,
        createHash('sha256')
          .update(await readFile(join(dir, path)))
          .digest('hex'),
      );
  }
  return out;
}
