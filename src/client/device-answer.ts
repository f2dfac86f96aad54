import { z } from 'zod';
import { parseWire, ShapeProblem } from '../admin-api/wire-shape.js';
import {
  oneLine,
  parseJson,
  ResponseError,
  successJson,
  type RawAnswer,
  type TransportOperation,
} from '../http/index.js';
import { DeviceAuthError, DeviceHttpError, DeviceRefusedError, type StatusData } from './device-errors.js';

/**
 * Reading one HTTP answer of the device: the status decides success or which typed error, and
 * every JSON body goes through zod, starting with the envelope `{success, error?}` that every
 * Admin API answer carries.
 */

export interface AnswerContext {
  url: string;
  username: string;
  operation: TransportOperation;
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
   * ResponseError naming the device and the operation.
   */
  read<T>(parse: (json: Record<string, unknown>) => T): T;
}

const Envelope = z.looseObject({
  success: z.boolean(),
  error: z.string().optional(),
});

/** What an error answer may say; read leniently, since the status already tells the failure. */
const ErrorSentence = z.looseObject({ error: z.string().optional(), message: z.string().optional() });

const REFUSED = new Set([400, 409, 413, 417]);
const MAX_SENTENCE = 500;

export function interpretAnswer(raw: RawAnswer, context: AnswerContext): DeviceAnswer {
  const data = { url: context.url, ...context.operation, status: raw.status };
  if (raw.status >= 200 && raw.status < 300) {
    // A 202 with no body still means "accepted": refusing it would report a restart as failed.
    const body =
      raw.status === 202 && raw.text.trim() === ''
        ? { success: true }
        : successJson(raw, 'device', data, context.redact);
    const envelope = readShape(body, (value) => parseWire(Envelope, value), data);
    if (!envelope.success)
      throw new DeviceRefusedError({ ...data, deviceMessage: oneLine(envelope.error, context.redact, MAX_SENTENCE) });
    return answer(raw.status, envelope, data);
  }
  const json = parseJson(raw.text);
  if (context.answers.includes(raw.status)) return answer(raw.status, isObject(json) ? json : {}, data);
  const deviceMessage = sentenceOf(json, context.redact);
  if (raw.status === 401) throw new DeviceAuthError({ ...data, deviceMessage, username: context.username });
  if (REFUSED.has(raw.status)) throw new DeviceRefusedError({ ...data, deviceMessage });
  throw new DeviceHttpError({ ...data, deviceMessage });
}

/** The answer's JSON as endpoints see it: the envelope (`success`, `error`) is checked here and left out. */
function answer(status: number, json: Record<string, unknown>, data: StatusData): DeviceAnswer {
  const payload = Object.fromEntries(Object.entries(json).filter(([key]) => key !== 'success' && key !== 'error'));
  return { status, read: (parse) => readShape(payload, parse, data) };
}

function readShape<T, J>(json: J, parse: (json: J) => T, data: StatusData): T {
  try {
    return parse(json);
  } catch (error) {
    if (error instanceof ShapeProblem)
      throw new ResponseError('device', { ...data, problem: 'shape', detail: error.message }, { cause: error });
    throw error;
  }
}

/** The device's own sentence in an error answer, if it gave one. */
export function deviceSentence(raw: RawAnswer, redact: (text: string) => string): string | undefined {
  return sentenceOf(parseJson(raw.text), redact);
}

function sentenceOf(json: unknown, redact: (text: string) => string): string | undefined {
  const said = ErrorSentence.safeParse(json);
  return said.success ? oneLine(said.data.error ?? said.data.message, redact, MAX_SENTENCE) : undefined;
}

function isObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}
