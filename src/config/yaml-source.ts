import { setImmediate as nextTurn } from 'node:timers/promises';
import {
  type CST,
  Composer,
  type Document,
  isAlias,
  isMap,
  isPair,
  isScalar,
  isSeq,
  Lexer,
  LineCounter,
  type Node,
  parseDocument,
  Parser,
  visit,
  YAMLParseError,
} from 'yaml';
import { formatKeyPath, type KeyPath, type Problem, Severity, type UnplacedProblem } from '../core/problem.js';
import { readsAs } from './did-you-mean.js';

/**
 * A YAML file parsed with positions kept, so every later problem can say FILE:LINE:COL.
 * Both the stick's file and the agent's own agent.yaml go through here.
 */
export interface YamlSource {
  file: string;
  text: string;
  document: Document.Parsed;
  lineCounter: LineCounter;
}

const MAX_ALIASES = 100;
/** How many YAML syntax errors of one file become problems. */
const MAX_SYNTAX_PROBLEMS = 20;

export interface ParsedYaml {
  source: YamlSource;
  /** The plain data, or undefined when the YAML itself is broken. */
  data: unknown;
  problems: Problem[];
}

/** Known YAML traps get a plain sentence instead of the parser's wording. */
function plainSentence(code: string, message: string): { message: string; hint?: string } | undefined {
  switch (code) {
    case 'TAB_AS_INDENT':
      return { message: 'tabs are not allowed for indentation', hint: 'indent with spaces' };
    case 'DUPLICATE_KEY':
      return { message: 'this key appears twice in the same map', hint: 'remove or merge one of them' };
    case 'MULTIPLE_DOCS':
      return { message: 'the file holds more than one YAML document', hint: 'remove the extra "---" line' };
    case 'MULTILINE_IMPLICIT_KEY':
      return {
        message: 'a key must fit on one line; a ":" or a quote may be missing',
        hint: 'check this line and the one before for a missing ":" or quote',
      };
    case 'BLOCK_AS_IMPLICIT_KEY':
      return {
        message: 'a key is indented under a key that already has a value on its line',
        hint: 'fix the indentation, or move the value onto its own lines',
      };
    case 'MISSING_CHAR':
      if (message.includes('closing'))
        return { message: 'a quoted value is not closed', hint: 'add the closing quote' };
      return { message: 'a key is missing its ":"', hint: 'write key: value' };
    case 'BAD_INDENT':
      if (/^Flow (map|sequence)/.test(message)) {
        const close = message.startsWith('Flow map') ? '}' : ']';
        return {
          message: `a ${close === '}' ? '{ ... }' : '[ ... ]'} value is not closed before the file or block ends`,
          hint: `add the closing ${close}, and indent continuation lines further than the key`,
        };
      }
      return {
        message: 'the indentation here does not line up with the keys around it',
        hint: 'align it with its sibling keys, using spaces',
      };
    default:
      if (message.includes('call stack'))
        return {
          message: 'the file nests deeper than mpprov reads',
          hint: 'a stick file needs only a few levels of nesting',
        };
      return undefined;
  }
}

/**
 * `logLevel: 'error'`: the library's warnings go through process.emitWarning, which Node prints
 * on stderr as they are, and the one for a collection used as a key quotes that key, a password
 * inside it too. Such a key is reported as an unknown key, through the redactor.
 */
const PARSE_OPTIONS = { prettyErrors: false, uniqueKeys: true, strict: true, logLevel: 'error' } as const;

export function parseYaml(file: string, text: string): ParsedYaml {
  return fromDocument(file, text, parseDocument(text, PARSE_OPTIONS));
}

/** Lexical tokens between two turns of the event loop: a few milliseconds of parsing. */
const TOKENS_PER_TURN = 2_000;

/**
 * parseYaml for an async caller and a file up to the stick's 256 KiB cap: the lexer and parser
 * give way to the event loop every few thousand tokens (as parseDocument would run them, but
 * driven here), so a SIGTERM or Ctrl-C is handled while a large file is parsed, not a second later.
 * The document is composed in one step (the library composes a document at once).
 */
export async function parseYamlYielding(file: string, text: string): Promise<ParsedYaml> {
  // Positions come from the text's own line starts (fromDocument), not from the parser's counter.
  const parser = new Parser();
  const tokens: CST.Token[] = [];
  let lexemes = 0;
  for (const lexeme of new Lexer().lex(text, false)) {
    for (const token of parser.next(lexeme)) tokens.push(token);
    if (++lexemes % TOKENS_PER_TURN === 0) await nextTurn();
  }
  for (const token of parser.end()) tokens.push(token);
  await nextTurn();
  let document: Document.Parsed | undefined;
  // As parseDocument does: the first document, and an error for any further one.
  for (const next of new Composer(PARSE_OPTIONS).compose(tokens, true, text.length)) {
    if (document === undefined) document = next;
    else {
      document.errors.push(
        new YAMLParseError(
          [next.range[0], next.range[1]],
          'MULTIPLE_DOCS',
          'Source contains multiple documents; please use YAML.parseAllDocuments()',
        ),
      );
      break;
    }
  }
  if (document === undefined) throw new Error('the YAML composer made no document');
  await nextTurn();
  return fromDocument(file, text, document);
}

function fromDocument(file: string, text: string, document: Document.Parsed): ParsedYaml {
  // The parser's own line counter loses count after a stretch it cannot read: lines from the text.
  const lineCounter = linesOf(text);
  const source: YamlSource = { file, text, document, lineCounter };
  const problems: Problem[] = [];

  // After the first broken spot the parser's recovery can report every later token (23 000
  // problems, half a gigabyte as printed, for one 30 KB file): the first few say what to fix.
  for (const error of document.errors.slice(0, MAX_SYNTAX_PROBLEMS)) {
    const plain = plainSentence(error.code, error.message);
    const { line, col } = lineCounter.linePos(error.pos[0]);
    problems.push({
      severity: Severity.Error,
      file,
      line,
      column: col,
      path: formatKeyPath(keyPathAtOffset(document, error.pos[0])),
      // Parser messages can quote long stretches of the file: keep one short sentence.
      message: plain?.message ?? `YAML syntax: ${withoutQuotedToken(firstSentence(error.message)).slice(0, 160)}`,
      hint:
        plain?.hint ?? 'check this line and the one before it for a missing quote, bracket or ":", and for indentation',
    });
  }
  if (problems.length > 0) return { source, data: undefined, problems };

  // Count aliases ourselves, so the problem can point at the alias that crossed the limit; and
  // find every alias without an anchor before it, which toJS would throw on (a stack trace, with
  // the alias name, which may be a password that starts with '*', in its message).
  // One walk in document order, keeping the anchors met so far: an alias whose name is not among
  // them has no anchor before it. (Alias.resolve walks the whole document for each alias, which
  // made a file of a few thousand aliases take seconds.) A node's own anchor counts for the
  // aliases inside it, as YAML's resolve has it.
  let aliases = 0;
  let tooMany: Node | undefined;
  const anchors = new Set<string>();
  visit(document, (_key, node) => {
    if (isAlias(node)) {
      aliases += 1;
      if (aliases > MAX_ALIASES && tooMany === undefined) tooMany = node;
      if (!anchors.has(node.source)) problems.push(unresolvedAlias(source, node.source, node.range?.[0] ?? 0));
    } else if ((isScalar(node) || isMap(node) || isSeq(node)) && node.anchor !== undefined) anchors.add(node.anchor);
  });
  if (problems.length > 0) return { source, data: undefined, problems };
  if (tooMany !== undefined) {
    const { line, col } = lineCounter.linePos(tooMany.range?.[0] ?? 0);
    problems.push({
      severity: Severity.Error,
      file,
      line,
      column: col,
      path: formatKeyPath(keyPathAtOffset(document, tooMany.range?.[0] ?? 0)),
      message: `the file uses more than ${MAX_ALIASES} YAML aliases (*name)`,
      hint: 'write the values out instead of repeating aliases',
    });
    return { source, data: undefined, problems };
  }
  return { source, data: document.toJS({ maxAliasCount: -1 }), problems };
}

/**
 * Keys whose value may be a secret, in a stick file or agent.yaml alike: the alias name there is
 * what the person meant as the value (`password: *Star-Secret`), so it is never quoted. Broader
 * than the schema's secret keys on purpose: a misspelt or misplaced key is still someone's secret,
 * and so is one written with look-alike letters (tested as it reads).
 */
const SECRET_LOOKING_KEY = /pass|secret|token|credential|psk|private|key$/i;

function unresolvedAlias(source: YamlSource, name: string, offset: number): Problem {
  const path = keyPathAtOffset(source.document, offset);
  const lastKey = [...path].reverse().find((part): part is string => typeof part === 'string');
  const secret = lastKey !== undefined && SECRET_LOOKING_KEY.test(readsAs(lastKey));
  const { line, col } = source.lineCounter.linePos(offset);
  return {
    severity: Severity.Error,
    file: source.file,
    line,
    column: col,
    path: formatKeyPath(path),
    message: secret
      ? 'this value starts with *, which YAML reads as an alias, and no anchor of that name is set before it (the name is not shown: a secret goes here)'
      : `the alias *${name.slice(0, 64)} refers to no anchor: no &${name.slice(0, 64)} is set before it`,
    hint: secret
      ? "if the value itself starts with *, put it in single quotes ('*...')"
      : `set the anchor first (key: &${name.slice(0, 64)} value), write the value out, or quote a value that starts with *`,
  };
}

/**
 * Line starts counted from the text itself. The parser's own LineCounter misses the line breaks
 * inside a stretch it could not read (a file whose first key lost its comment '#'), so a later
 * error landed lines too early, outside the password's span that withholds it.
 */
function linesOf(text: string): LineCounter {
  const counter = new LineCounter();
  counter.addNewLine(0);
  for (let at = text.indexOf('\n'); at >= 0; at = text.indexOf('\n', at + 1)) counter.addNewLine(at + 1);
  return counter;
}

/**
 * `Unexpected double-quoted-scalar token in YAML stream: "\"...\""` quotes the token, which may
 * be a password YAML could not place: the kind of token is said, its text never.
 */
function withoutQuotedToken(message: string): string {
  return message.replace(/ in YAML stream: .*$/s, ' in YAML stream');
}

function firstSentence(message: string): string {
  return message.split('\n')[0]?.replace(/ at line \d+, column \d+:?$/, '') ?? message;
}

/** Places problems found on the data at the YAML node their key path names. */
export function placeProblem(source: YamlSource, problem: UnplacedProblem): Problem {
  const { offset } = locate(source.document, problem.path, problem.atKey === true);
  const { line, col } = source.lineCounter.linePos(offset);
  return {
    severity: problem.severity,
    file: source.file,
    line,
    column: col,
    path: formatKeyPath(problem.path),
    message: problem.message,
    ...(problem.hint === undefined ? {} : { hint: problem.hint }),
  };
}

/**
 * Finds the offset of the node at `path`: its value, or its key with `atKey`. A path that does not
 * exist (a missing required key) points at the nearest ancestor that does.
 */
function locate(document: Document.Parsed, path: KeyPath, atKey: boolean): { offset: number } {
  let node: unknown = document.contents;
  let offset = document.contents?.range?.[0] ?? 0;
  for (let i = 0; i < path.length; i++) {
    const part = path[i];
    const last = i === path.length - 1;
    if (isMap(node)) {
      const pair = node.items.find((p) => isScalar(p.key) && String(p.key.value) === String(part));
      if (pair === undefined) return { offset };
      const keyNode = pair.key as Node;
      if (last && atKey) return { offset: keyNode.range?.[0] ?? offset };
      node = pair.value;
      const valueStart = (pair.value as Node | null)?.range?.[0];
      offset = valueStart ?? keyNode.range?.[0] ?? offset;
    } else if (isSeq(node) && typeof part === 'number') {
      const item = node.items[part] as Node | undefined;
      if (item === undefined) return { offset };
      node = item;
      offset = item.range?.[0] ?? offset;
    } else {
      return { offset };
    }
  }
  return { offset };
}

/** The key path of the deepest node that contains `offset`: for syntax errors, and where a secret is written. */
export function keyPathAtOffset(document: Document.Parsed, offset: number): KeyPath {
  const path: (string | number)[] = [];
  let node: unknown = document.contents;
  // A stick file is a few levels deep; a deeper path says nothing more and may be thousands long.
  while (path.length < 12) {
    if (isMap(node)) {
      const pair = node.items.find((p) => {
        const start = (p.key as Node | null)?.range?.[0] ?? Infinity;
        const end = (p.value as Node | null)?.range?.[2] ?? (p.key as Node | null)?.range?.[2] ?? -1;
        return isPair(p) && start <= offset && offset <= end;
      });
      if (pair === undefined || !isScalar(pair.key)) break;
      path.push(String(pair.key.value));
      node = pair.value;
    } else if (isSeq(node)) {
      const index = node.items.findIndex((item) => {
        const range = (item as Node | null)?.range;
        return range != null && range[0] <= offset && offset <= range[2];
      });
      if (index < 0) break;
      path.push(index);
      node = node.items[index];
    } else {
      break;
    }
  }
  return path;
}
