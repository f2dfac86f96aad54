import { setImmediate as nextTurn } from 'node:timers/promises';
import { visit } from 'yaml';
import { createHash } from 'node:crypto';
import { dirname, resolve } from 'node:path';
import { fileStickReader, overBudget, ReadSession, type StickReader } from '../ingest/index.js';
import { formatKeyPath, type KeyPath, type Problem, Severity, type UnplacedProblem } from '../core/problem.js';
import { MIN_SECRET_LENGTH, Redactor, secretForms } from '../core/redact.js';
import { Secret } from '../core/secret.js';
import { isValidPassphrase } from './interface-rules.js';
import { mapKeyProblems } from './map-keys.js';
import { salvageStick } from './salvage.js';
import { STICK_KEYS, STICK_SECRET_KEYS, StickFile } from './schema.js';
import { roleOf, SchemaRole, schemaBlocks, secretKeyOfFile } from './schema-roles.js';
import {
  findSecretSpans,
  lineHoldsSecret,
  maskSecretSpans,
  type SecretSpan,
  writtenSecretPieces,
} from './secret-spans.js';
import { checkStickRules } from './stick-rules.js';
import { encodingProblems } from './text-encoding.js';
import { parseYamlYielding, placeProblem, type YamlSource } from './yaml-source.js';
import { problemsFromZod } from './zod-issues.js';
import { strictUtf8 } from '../core/utf8-text.js';

/** A file the configuration names, read into memory once (so a pulled stick cannot break a job). */
export interface StickFileContent {
  /** The path as written in the configuration, relative to its folder. */
  name: string;
  bytes: Buffer;
  sha256: string;
  keyPath: KeyPath;
}

export interface LoadedStick {
  /** The configuration file, absolute. */
  file: string;
  /** How problems name the file: as given on the command line, or as on the stick. */
  label: string;
  dir: string;
  /** SHA-256 of the configuration file's bytes. */
  sha256: string;
  /**
   * The parsed file, undefined when its YAML or schema is broken. Every secret in it is a Secret,
   * inline or read from its `_file` (then it sits at the inline key: one place to read it from).
   */
  model: StickFile | undefined;
  /**
   * The file as far as its schema accepts it (the model itself when valid): what the certificate
   * checks judge, so a schema problem anywhere hides no certificate problem. Never applied.
   */
  judged: StickFile | undefined;
  problems: Problem[];
  /** Every secret the file holds, inline or from a file, also where the schema refused its block: for the redactor. */
  secrets: readonly Secret[];
  /** Referenced certificate and key files, by the dotted key path that names them. */
  files: ReadonlyMap<string, StickFileContent>;
  /** A line of the file to show under a problem, or undefined when it holds any part of a secret. */
  sourceLine(line: number): string | undefined;
  /** Attaches file, line and column to a problem found later (the certificate checks). */
  place: (problem: UnplacedProblem) => Problem;
}

/**
 * `user:password@` in a URL: a line holding one is never shown either. The scheme starts only
 * where no scheme character precedes it: otherwise every letter of a long word is tried as a
 * start and each try runs to the word's end, quadratic in the line (seconds for 40 000 chars).
 * The user name stops at the first ':' (as in a URL), so a run of colons is not tried at each one.
 */
const URL_CREDENTIALS = /(?<![a-z0-9+.-])[a-z][a-z0-9+.-]*:\/\/[^\s/@:]*:[^\s/@]*@/i;

/**
 * Loads a stick's configuration file through `reader` (the files themselves unless a caller, the
 * daemon's job, brings its seam; each file is read once, and the YAML parsed once from what that
 * read returned): YAML with positions, the schema, the rules across keys, and every file it names
 * (secrets and certificates), collecting all problems rather than the first. Never throws for bad input.
 */
export async function loadStick(
  configFile: string,
  options: { reader?: StickReader; label?: string } = {},
): Promise<LoadedStick> {
  const reader = options.reader ?? fileStickReader;
  const file = resolve(configFile);
  // Problems name the file as the person gave it (or as the stick shows it), not the absolute path.
  const label = options.label ?? configFile;
  const dir = dirname(file);
  const read = await reader.readConfigFile(file);
  if (!read.ok) {
    const top = (p: { severity: Severity; message: string; hint?: string | undefined; path?: KeyPath }): Problem => ({
      severity: p.severity,
      file: label,
      line: 1,
      column: 1,
      path: formatKeyPath(p.path ?? []),
      message: p.message,
      ...(p.hint === undefined ? {} : { hint: p.hint }),
    });
    const problems = [top({ severity: Severity.Error, message: read.message, hint: read.hint })];
    return {
      file,
      label,
      dir,
      sha256: '',
      model: undefined,
      judged: undefined,
      problems,
      secrets: [],
      files: new Map(),
      sourceLine: () => undefined,
      place: top,
    };
  }
  const sha256 = createHash('sha256').update(read.bytes).digest('hex');
  const text = read.bytes.toString('utf8');
  const parsed = await parseYamlYielding(label, text);
  const spans = findSecretSpans(parsed.source, STICK_SECRET_KEYS, STICK_KEYS);
  const secrets: Secret[] = [];
  const files = new Map<string, StickFileContent>();
  const redactor = new Redactor();
  // Worked out at the first source line asked for, when every secret of the stick is known.
  let decodedSecretLines: ReadonlySet<number> | undefined;
  const place = (problem: UnplacedProblem): Problem => redactor.value(placeProblem(parsed.source, problem));
  const finish = (problems: Problem[], model?: StickFile, judged: StickFile | undefined = model): LoadedStick => {
    redactor.add(secrets);
    return {
      file,
      label,
      dir,
      sha256,
      model,
      judged,
      secrets,
      files,
      place,
      problems: problems.sort((a, b) => a.line - b.line || a.column - b.column).map((p) => redactor.value(p)),
      sourceLine: (line) =>
        sourceLine(
          text,
          line,
          spans,
          redactor,
          () => (decodedSecretLines ??= linesDecodingToSecrets(parsed.source, redactor)),
        ),
    };
  };
  // Each secret's text as written is a secret too, whatever YAML made of it: broken YAML gives no
  // values, and valid YAML can carry a password inside a key (`? { password: ... }` is a key).
  secrets.push(...writtenSecretPieces(text, spans).map((piece) => new Secret(piece)));
  const encoding = encodingProblems(read.bytes, parsed.source);
  if (encoding.length > 0) return finish(maskSecretSpans([...encoding, ...parsed.problems], spans, false));
  if (parsed.problems.length > 0) return finish(maskSecretSpans(parsed.problems, spans, true));

  if (parsed.data === undefined || parsed.data === null) {
    return finish([
      {
        severity: Severity.Error,
        file: label,
        line: 1,
        column: 1,
        path: '',
        message: 'the configuration file is empty',
        hint: 'start it with version: 1 and monitoring_points:',
      },
    ]);
  }
  secrets.push(...inlineSecrets(parsed.data));
  const unplaced: UnplacedProblem[] = [];
  // Turns of the event loop between the long steps of a large file: a signal is handled between them.
  await nextTurn();
  const checked = StickFile.safeParse(parsed.data);
  if (!checked.success) unplaced.push(...problemsFromZod(checked.error, parsed.data, StickFile));
  // Map entries zod drops unseen (`__proto__`) are schema problems too: the model would lack them.
  const dropped = mapKeyProblems(StickFile, parsed.data);
  unplaced.push(...dropped);
  const valid = checked.success && dropped.length === 0;
  await nextTurn();
  // With schema problems the rules still run on every block that parsed, but the result carries
  // no model: nothing may be applied from a file that is not entirely valid.
  const checkable = checked.success ? checked.data : salvageStick(parsed.data);
  if (checkable !== undefined) {
    unplaced.push(...checkStickRules(checkable));
    await nextTurn();
    unplaced.push(...shortInlineSecrets(checkable));
    unplaced.push(...(await readReferences(reader, dir, checkable, files, secrets)));
  }
  const problems = [
    ...maskSecretSpans(
      unplaced.map((p) => placeProblem(parsed.source, p)),
      spans,
      false,
    ),
    ...cutByComment(text, label, spans),
  ];
  return finish(problems, valid ? checked.data : undefined, checkable);
}

/**
 * Every inline secret of the raw data, made by the secret keys' own schema, including those in
 * blocks the schema refused as a whole: no problem about such a block may quote its secret either.
 */
function inlineSecrets(data: unknown): Secret[] {
  const out: Secret[] = [];
  for (const { block, shape } of schemaBlocks(StickFile, data)) {
    for (const [key, schema] of Object.entries(shape)) {
      const value = block[key];
      if (value === undefined || roleOf(schema) !== SchemaRole.Secret) continue;
      const parsed = schema.safeParse(value);
      if (parsed.success && parsed.data instanceof Secret) out.push(parsed.data);
      // YAML read `password: 12345678` as a number: the schema refuses it, and it is still a secret.
      else if (typeof value === 'number' || typeof value === 'bigint') out.push(new Secret(String(value)));
    }
  }
  return out;
}

/**
 * Reads what the model names: each `<secret>_file` into a Secret at its inline key (the inline
 * value wins; giving both is a rule problem already), each certificate or key file into `files`.
 * Which keys are which comes from the schema's roles. One session for the whole stick: a file
 * named many times is read once, and its Secret and hash are made once (the same objects at
 * every key); what the stick makes the agent hold is bounded, a secret counted with the forms
 * the redactor will look for (a 1 MiB password costs ten times that there).
 */
async function readReferences(
  reader: StickReader,
  dir: string,
  model: StickFile,
  files: Map<string, StickFileContent>,
  secrets: Secret[],
): Promise<UnplacedProblem[]> {
  const problems: UnplacedProblem[] = [];
  const fail = (path: KeyPath, message: string, hint?: string): void => {
    problems.push({ severity: Severity.Error, path, message, ...(hint === undefined ? {} : { hint }) });
  };
  const session = new ReadSession();
  const hashes = new Map<Buffer, string>();
  const secretOf = new Map<Buffer, Secret | undefined>();
  for (const { block, shape, path } of schemaBlocks(StickFile, model)) {
    for (const [key, schema] of Object.entries(shape)) {
      const fileName = block[key];
      const role = roleOf(schema);
      if (typeof fileName !== 'string' || (role !== SchemaRole.SecretFile && role !== SchemaRole.CredentialFile))
        continue;
      const keyPath = [...path, key];
      const read = await reader.readReferencedFile(dir, fileName, session);
      if (!read.ok) {
        fail(keyPath, read.message, read.hint);
        continue;
      }
      const bytes = read.bytes;
      if (role === SchemaRole.CredentialFile) {
        let sha256 = hashes.get(bytes);
        if (sha256 === undefined) hashes.set(bytes, (sha256 = createHash('sha256').update(bytes).digest('hex')));
        files.set(formatKeyPath(keyPath), { name: fileName, bytes, sha256, keyPath });
        continue;
      }
      const secretKey = secretKeyOfFile(key);
      // A secret file ends with one newline as editors write it; that newline is not the secret.
      const value = strictUtf8(bytes)?.replace(/\r?\n$/, '');
      if (value === undefined) {
        fail(
          keyPath,
          `secret file '${fileName}' is not UTF-8 text (a byte such as Latin-1's): its ${secretKey} would reach the device with other letters`,
          'save it as UTF-8',
        );
        continue;
      }
      if (value === '') {
        fail(keyPath, `secret file '${fileName}' is empty`, `write the ${secretKey} into it`);
        continue;
      }
      if (!secretOf.has(bytes)) {
        const cost = secretForms(value).reduce((sum, form) => sum + form.length, 0);
        const secret = session.fits(cost) ? new Secret(value) : undefined;
        if (secret !== undefined) {
          session.charge(cost);
          secrets.push(secret);
        }
        secretOf.set(bytes, secret);
      }
      const secret = secretOf.get(bytes);
      if (secret === undefined) {
        const { message, hint } = overBudget(`secret file '${fileName}'`);
        fail(keyPath, message, hint);
        continue;
      }
      if (value.length < MIN_SECRET_LENGTH) problems.push(tooShort(keyPath, secretKey));
      if (secretKey === 'passphrase' && !isValidPassphrase(value)) {
        fail(
          keyPath,
          `passphrase in '${fileName}' must be 8 to 63 printable ASCII characters, or 64 hex digits`,
          'check the passphrase length and characters',
        );
      } else if (block[secretKey] === undefined) block[secretKey] = secret;
    }
  }
  return problems;
}

/** A secret so short the redactor does not look for it (core/redact.ts says why): said, not refused. */
function shortInlineSecrets(model: StickFile): UnplacedProblem[] {
  const problems: UnplacedProblem[] = [];
  for (const { block, shape, path } of schemaBlocks(StickFile, model)) {
    for (const [key, schema] of Object.entries(shape)) {
      const value = block[key];
      if (
        roleOf(schema) === SchemaRole.Secret &&
        value instanceof Secret &&
        !value.satisfies((v) => v.length >= MIN_SECRET_LENGTH)
      ) {
        problems.push(tooShort([...path, key], key));
      }
    }
  }
  return problems;
}

function tooShort(path: KeyPath, key: string): UnplacedProblem {
  return {
    severity: Severity.Warning,
    path,
    message: `this ${key} is shorter than ${MIN_SECRET_LENGTH} characters: too short to tell apart from ordinary text, so mpprov cannot keep it out of logs`,
    hint: `use a longer ${key}`,
  };
}

/**
 * `password: Peap-Pass #42` is the password `Peap-Pass`: YAML ends an unquoted value at ' #'. A
 * password with ' #' in it is plausible, a comment after one is too, so this is a warning, at the
 * ' #', quoting nothing.
 */
function cutByComment(text: string, file: string, spans: readonly SecretSpan[]): Problem[] {
  const lines = text.split('\n');
  const out: Problem[] = [];
  for (const span of spans) {
    const first = (lines[span.start.line - 1] ?? '').replace(/\r$/, '');
    const value = first.slice(span.start.column - 1);
    if (/^\s*["'|>]/.test(value)) continue;
    for (let line = span.start.line; line <= span.end.line; line++) {
      const shown = (lines[line - 1] ?? '').replace(/\r$/, '');
      const from = line === span.start.line ? span.start.column - 1 : 0;
      const at = shown.slice(from).search(/\s#/);
      if (at < 0) continue;
      out.push({
        severity: Severity.Warning,
        file,
        line,
        column: from + at + 2,
        path: span.path,
        message: `YAML treats ' #' as a comment, so this ${span.key} ends before it`,
        hint: `quote the value if ' #' is part of the ${span.key}: ${span.key}: '...'`,
      });
      break;
    }
  }
  return out;
}

function sourceLine(
  text: string,
  line: number,
  spans: readonly SecretSpan[],
  redactor: Redactor,
  decoded: () => ReadonlySet<number>,
): string | undefined {
  const shown = text.split(/\r?\n/)[line - 1];
  if (shown === undefined || lineHoldsSecret(spans, line) || URL_CREDENTIALS.test(shown) || redactor.holdsSecret(shown))
    return undefined;
  if (decoded().has(line)) return undefined;
  return shown;
}

/**
 * Lines holding a scalar (key or value) whose value, as YAML decodes it, holds a secret though the
 * text does not: a double-quoted "\x48unter..." or "\u0048unter..." copy of a password elsewhere
 * on the stick. The line as written would show the secret to anyone who reads the escapes.
 */
function linesDecodingToSecrets(source: YamlSource, redactor: Redactor): ReadonlySet<number> {
  const lines = new Set<number>();
  visit(source.document, {
    Scalar(_key, node) {
      if (node.range === undefined || node.range === null) return;
      const decoded = String(node.value);
      if (!redactor.holdsSecret(decoded)) return;
      const first = source.lineCounter.linePos(node.range[0]).line;
      const last = source.lineCounter.linePos(Math.max(node.range[0], node.range[1] - 1)).line;
      for (let line = first; line <= last; line++) lines.add(line);
    },
  });
  return lines;
}
