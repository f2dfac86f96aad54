import { z } from 'zod';
import {
  DeviceAuthError,
  DeviceHttpError,
  DeviceRefusedError,
  DeviceResponseError,
  type DeviceOperation,
} from '../core/errors.js';
import { parseWire, ShapeProblem } from '../admin-api/wire-shape.js';

/**
 * Reading one HTTP answer of the device: the status decides success or which typed error, and
 * every JSON body goes through zod, starting with the envelope `{success, error?}` that every
 * Admin API answer carries.
 */

export interface RawAnswer {
  status: number;
  contentType: string | undefined;
  text: string;
}

export interface AnswerContext {
  url: string;
  username: string;
  operation: DeviceOperation;
  /** Statuses that are answers for this endpoint (404 for getInterface), not failures. */
  answers: readonly number[];
  /**
   * Redacts the request's own secrets from the device's raw text before it is folded onto one
   * line and cut: a device may echo our body, and a secret split by the cut or re-spaced by the
   * folding would no longer be found by the report stage's redactor.
   */
  redact: (text: string) => string;
}

export interface DeviceAnswer {
  status: number;
  /**
   * Parses the answer's JSON object without its envelope; a ShapeProblem becomes a
   * DeviceResponseError naming the operation.
   */
  read<T>(parse: (json: Record<string, unknown>) => T): T;
}

export const Envelope = z.looseObject({
  success: z.boolean(),
  error: z.string().optional(),
});

/** What an error answer may say; read leniently, since the status already tells the failure. */
const ErrorSentence = z.looseObject({ error: z.string().optional(), message: z.string().optional() });

const REFUSED = new Set([400, 409, 413, 417]);
const MAX_SENTENCE = 500;
const SNIPPET = 80;

export function interpretAnswer(raw: RawAnswer, context: AnswerContext): DeviceAnswer {
  const data = { url: context.url, ...context.operation, status: raw.status };
  const json = parseJson(raw.text);
  if (raw.status >= 200 && raw.status < 300) {
    // A 202 with no body still means "accepted": refusing it would report a restart as failed.
    const body = json === NOT_JSON && raw.status === 202 && raw.text.trim() === '' ? { success: true } : json;
    if (body === NOT_JSON) {
      throw new DeviceResponseError({ ...data, problem: 'not-json', detail: describeBody(raw, context.redact) });
    }
    const envelope = readShape(body, (value) => parseWire(Envelope, value), data);
    if (!envelope.success)
      throw new DeviceRefusedError({ ...data, deviceMessage: sentence(envelope.error, context.redact) });
    return answer(raw.status, envelope, data);
  }
  if (context.answers.includes(raw.status)) return answer(raw.status, isObject(json) ? json : {}, data);
  const deviceMessage = sentenceOf(json, context.redact);
  if (raw.status === 401) throw new DeviceAuthError({ ...data, deviceMessage, username: context.username });
  if (REFUSED.has(raw.status)) throw new DeviceRefusedError({ ...data, deviceMessage });
  throw new DeviceHttpError({ ...data, deviceMessage });
}

/** The answer's JSON as endpoints see it: the envelope (`success`, `error`) is checked here and left out. */
function answer(
  status: number,
  json: Record<string, unknown>,
  data: ConstructorParameters<typeof DeviceRefusedError>[0],
): DeviceAnswer {
  const { success: _success, error: _error, ...payload } = json;
  return { status, read: (parse) => readShape(payload, parse, data) };
}

function readShape<T, J>(json: J, parse: (json: J) => T, data: ConstructorParameters<typeof DeviceRefusedError>[0]): T {
  try {
    return parse(json);
  } catch (error) {
    if (error instanceof ShapeProblem)
      throw new DeviceResponseError({ ...data, problem: 'shape', detail: error.message }, { cause: error });
    throw error;
  }
}

/** The device's own sentence in an error answer, if it gave one. */
export function deviceSentence(raw: RawAnswer, redact: (text: string) => string): string | undefined {
  return sentenceOf(parseJson(raw.text), redact);
}

function sentenceOf(json: unknown, redact: (text: string) => string): string | undefined {
  const said = ErrorSentence.safeParse(json);
  return said.success ? sentence(said.data.error ?? said.data.message, redact) : undefined;
}

const NOT_JSON = Symbol('not JSON');

function parseJson(text: string): unknown {
  try {
    return JSON.parse(text) as unknown;
  } catch {
    return NOT_JSON;
  }
}

function isObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/** The device's sentence on one line, bounded: it goes into our own one-line message. */
function sentence(text: string | undefined, redact: (text: string) => string): string | undefined {
  if (text === undefined) return undefined;
  const line = redact(text).replace(/\s+/g, ' ').trim();
  if (line === '') return undefined;
  return line.length > MAX_SENTENCE ? `${line.slice(0, MAX_SENTENCE)}...` : line;
}

/** `a body that is not JSON (text/html): "<html><body>Bad gateway</body></html>"`, or `an empty body instead of JSON`. */
function describeBody(raw: RawAnswer, redact: (text: string) => string): string {
  const line = redact(raw.text).replace(/\s+/g, ' ').trim();
  if (line === '') return 'an empty body instead of JSON';
  const type = raw.contentType === undefined ? '' : ` (${raw.contentType})`;
  const start = line.length > SNIPPET ? `${line.slice(0, SNIPPET)}...` : line;
  return `a body that is not JSON${type}: "${start}"`;
}
