import { createHash } from 'node:crypto';
import { dirname, resolve } from 'node:path';
import { readConfigFile, readReferencedFile } from '../ingest/index.js';
import { isValidPassphrase } from './interface-rules.js';
import { maskSecretTokens, secretTokens } from './secret-tokens.js';
import { formatKeyPath, type KeyPath, type Problem, Severity, type UnplacedProblem } from '../core/problem.js';
import { StickFile } from './schema.js';
import { Secret } from '../core/secret.js';
import { salvageStick } from './salvage.js';
import { checkStickRules } from './stick-rules.js';
import { parseYaml, placeProblem, type YamlSource } from './yaml-source.js';
import { problemsFromZod } from './zod-issues.js';

/** A file the configuration names, read into memory (so a pulled stick cannot break a job). */
export interface StickFileContent {
  /** The path as written in the configuration, relative to its folder. */
  name: string;
  bytes: Buffer;
  sha256: string;
  keyPath: KeyPath;
}

export interface LoadedStick {
  file: string;
  dir: string;
  /** SHA-256 of the configuration file's bytes. */
  sha256: string;
  /** The file's text, for showing source lines under problems (never lines that hold secrets). */
  text: string;
  /** The parsed file; undefined when its YAML or schema is broken. */
  stick: StickFile | undefined;
  problems: Problem[];
  /** Referenced certificate and key files, by the dotted key path that names them. */
  files: Map<string, StickFileContent>;
  /** Every password, passphrase and key password, inline or from a file, by the inline key's path. */
  secrets: Map<string, Secret>;
  /** Attaches file, line and column to a problem found later (the certificate checks). */
  place(problem: UnplacedProblem): Problem;
}

const SECRET_KEYS = ['password', 'passphrase', 'private_key_password'] as const;
const FILE_KEYS = ['ca_cert', 'client_cert', 'private_key'] as const;

/**
 * Loads a stick's configuration file: YAML with positions, the schema, the rules across keys, and
 * every file it names (secrets and certificates), collecting all problems rather than the first.
 * Never throws for bad input.
 */
export async function loadStick(configFile: string, options: { label?: string } = {}): Promise<LoadedStick> {
  const file = resolve(configFile);
  // Problems name the file as the person gave it (or as the stick shows it), not the absolute path.
  const label = options.label ?? configFile;
  const dir = dirname(file);
  const files = new Map<string, StickFileContent>();
  const secrets = new Map<string, Secret>();
  const read = await readConfigFile(file);
  const unplaced = (message: string, hint?: string): Problem => ({
    severity: Severity.Error, file: label, line: 1, column: 1, path: '', message, ...(hint === undefined ? {} : { hint }),
  });
  if (!read.ok) {
    const placeAtTop = (p: UnplacedProblem): Problem => ({ ...unplaced(p.message, p.hint), severity: p.severity, path: formatKeyPath(p.path) });
    return { file, dir, sha256: '', text: '', stick: undefined, problems: [unplaced(read.message, read.hint)], files, secrets, place: placeAtTop };
  }
  const sha256 = createHash('sha256').update(read.bytes).digest('hex');
  const text = read.bytes.toString('utf8');
  const parsed = parseYaml(label, text);
  const source = parsed.source;
  const place = (problem: UnplacedProblem): Problem => placeProblem(source, problem);
  const result: LoadedStick = { file, dir, sha256, text, stick: undefined, problems: parsed.problems, files, secrets, place };
  if (parsed.problems.length > 0) return maskSecrets(result);

  if (parsed.data === undefined || parsed.data === null) {
    result.problems.push(unplaced('the configuration file is empty', 'start it with version: 1 and monitoring_points:'));
    return result;
  }
  const checked = StickFile.safeParse(parsed.data);
  if (!checked.success) result.problems.push(...problemsFromZod(checked.error, parsed.data, StickFile).map(place));
  // With schema problems the rules still run on every block that parsed, but the result carries
  // no stick: nothing may be applied from a file that is not entirely valid.
  const checkable = checked.success ? checked.data : salvageStick(parsed.data);
  if (checked.success) result.stick = checked.data;
  if (checkable !== undefined) {
    const ruleProblems = checkStickRules(checkable);
    ruleProblems.push(...(await readReferences(dir, checkable, files, secrets)));
    result.problems.push(...ruleProblems.map(place));
  }
  return maskSecrets(sortProblems(result));
}

function sortProblems(result: LoadedStick): LoadedStick {
  result.problems.sort((a, b) => a.line - b.line || a.column - b.column);
  return result;
}

/** No problem may quote any part of what was written as a secret, however broken the YAML. */
function maskSecrets(result: LoadedStick): LoadedStick {
  const tokens = [...secretTokens(result.text), ...[...result.secrets.values()].map((s) => s.reveal())].filter((t) => t.length >= 4);
  if (tokens.length === 0) return result;
  result.problems = result.problems.map((p) => ({
    ...p,
    path: maskSecretTokens(p.path, tokens),
    message: maskSecretTokens(p.message, tokens),
    ...(p.hint === undefined ? {} : { hint: maskSecretTokens(p.hint, tokens) }),
  }));
  return result;
}

/** Every block of the file that can name secrets or credential files, with its key path. */
function* referenceBlocks(stick: StickFile): Generator<{ block: Record<string, unknown>; path: KeyPath }> {
  for (const [index, mp] of stick.monitoring_points.entries()) {
    const mpPath: KeyPath = ['monitoring_points', index];
    yield { block: mp, path: mpPath };
    if (mp.tls !== undefined) yield { block: mp.tls, path: [...mpPath, 'tls'] };
    for (const [name, iface] of Object.entries(mp.interfaces ?? {})) {
      const ifPath: KeyPath = [...mpPath, 'interfaces', name];
      if (iface.wireless !== undefined) yield { block: iface.wireless, path: [...ifPath, 'wireless'] };
      if (iface.dot1x !== undefined) {
        yield { block: iface.dot1x, path: [...ifPath, 'dot1x'] };
        if (iface.dot1x.inner_tls !== undefined) yield { block: iface.dot1x.inner_tls, path: [...ifPath, 'dot1x', 'inner_tls'] };
      }
    }
  }
}

async function readReferences(
  dir: string,
  stick: StickFile,
  files: Map<string, StickFileContent>,
  secrets: Map<string, Secret>,
): Promise<UnplacedProblem[]> {
  const problems: UnplacedProblem[] = [];
  const fail = (path: KeyPath, message: string, hint?: string): void => {
    problems.push({ severity: Severity.Error, path, message, ...(hint === undefined ? {} : { hint }) });
  };

  for (const { block, path } of referenceBlocks(stick)) {
    for (const key of SECRET_KEYS) {
      const inline = block[key];
      const fileName = block[`${key}_file`];
      const secretPath = formatKeyPath([...path, key]);
      if (typeof inline === 'string') secrets.set(secretPath, new Secret(inline));
      if (typeof fileName !== 'string') continue;
      const filePath = [...path, `${key}_file`];
      const read = await readReferencedFile(dir, fileName);
      if (!read.ok) {
        fail(filePath, read.message, read.hint);
        continue;
      }
      // A secret file ends with one newline as editors write it; that newline is not the secret.
      const value = read.bytes.toString('utf8').replace(/\r?\n$/, '');
      if (value === '') fail(filePath, `secret file '${fileName}' is empty`, `write the ${key} into it`);
      else if (key === 'passphrase' && !isValidPassphrase(value)) {
        fail(filePath, `passphrase in '${fileName}' must be 8 to 63 printable ASCII characters, or 64 hex digits`, 'check the passphrase length and characters');
      } else if (!secrets.has(secretPath)) secrets.set(secretPath, new Secret(value));
    }
    const fileKeys = path[path.length - 1] === 'tls' ? (['ca'] as const) : FILE_KEYS;
    for (const key of fileKeys) {
      const fileName = block[key];
      if (typeof fileName !== 'string') continue;
      const filePath = [...path, key];
      const read = await readReferencedFile(dir, fileName);
      if (!read.ok) {
        fail(filePath, read.message, read.hint);
        continue;
      }
      files.set(formatKeyPath(filePath), {
        name: fileName,
        bytes: read.bytes,
        sha256: createHash('sha256').update(read.bytes).digest('hex'),
        keyPath: filePath,
      });
    }
  }
  return problems;
}
