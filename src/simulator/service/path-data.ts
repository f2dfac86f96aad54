import type { AvailableSpan } from './appliance-registry.js';
import type { PathRecord } from './path-registry.js';

/**
 * A path's measurements, derived from timestamps when asked: no timer per path and nothing stored
 * per sample, so thousands of idle paths cost nothing. Data flows while the source MP is
 * AVAILABLE, starting `firstDataMs` after the later of the path's creation and the start of that
 * AVAILABLE span; from then on there is one element per metric every `sampleMs` of real time (no
 * time compression: an element's `time` is when it was measured). Values are a deterministic hash
 * of (path, metric, direction, time), so two reads of the same range agree.
 */

export interface PathDataSettings {
  /** Delay from "path exists and its MP is AVAILABLE" to its first element; default 3000 ms. */
  firstDataMs: number;
  /** One element per metric every this many ms (at least 1000: times are whole seconds); default 5000 ms. */
  sampleMs: number;
}

export const DEFAULT_PATH_DATA: PathDataSettings = { firstDataMs: 3_000, sampleMs: 5_000 };

/** The 13 documented arrays of each of data, dataInbound and dataOutbound. */
const PATH_METRICS = [
  'availableCapacity',
  'dataJitter',
  'dataLoss',
  'latency',
  'mos',
  'rtt',
  'totalCapacity',
  'twampJitter',
  'twampLoss',
  'twampRtt',
  'utilizedCapacity',
  'voiceJitter',
  'voiceLoss',
] as const;
type Metric = (typeof PATH_METRICS)[number];

/** Plausible [low, high] per metric: Mbps, ms, %, MOS. */
const RANGES: Record<Metric, readonly [number, number]> = {
  availableCapacity: [80, 95],
  dataJitter: [0.5, 3],
  dataLoss: [0, 0.2],
  latency: [8, 20],
  mos: [4, 4.4],
  rtt: [16, 40],
  totalCapacity: [98, 100],
  twampJitter: [0.3, 2],
  twampLoss: [0, 0.1],
  twampRtt: [15, 38],
  utilizedCapacity: [5, 20],
  voiceJitter: [0.5, 3],
  voiceLoss: [0, 0.2],
};

export type Aggregation = null | 60 | 1440;
export interface DataElement {
  time: number;
  value: number;
}
export type MetricArrays = Record<Metric, DataElement[]>;
export interface PathDataRecord {
  pathId: number;
  instrumentation: PathRecord['instrumentation'];
  aggregation: Aggregation;
  data: MetricArrays | null;
  dataInbound: MetricArrays | null;
  dataOutbound: MetricArrays | null;
}

/** A range of whole Unix seconds, both ends included. */
export interface SecondsRange {
  from: number;
  to: number;
}

const HOUR_S = 3_600;
const DAY_S = 86_400;

/**
 * The model's aggregation rule (service-api.md only says it depends on how far back the range
 * lies and how large it is): raw when the range is at most an hour and starts within the last
 * day; hourly when it is at most 7 days and starts within the last 30 days; daily otherwise.
 */
function aggregationFor(range: SecondsRange, nowMs: number): Aggregation {
  const length = range.to - range.from;
  const age = Math.floor(nowMs / 1000) - range.from;
  if (length <= HOUR_S && age <= DAY_S) return null;
  if (length <= 7 * DAY_S && age <= 30 * DAY_S) return 60;
  return 1440;
}

/** The spans (epoch ms) during which the path produces data: each AVAILABLE span after the delay. */
function flowSpans(path: PathRecord, available: readonly AvailableSpan[], settings: PathDataSettings) {
  const flows: { from: number; to: number | undefined }[] = [];
  for (const span of available) {
    const from = Math.max(span.from, path.createdAt) + settings.firstDataMs;
    if (span.to === undefined || from < span.to) flows.push({ from, to: span.to });
  }
  return flows;
}

/** INDETERMINATE unless the source MP is AVAILABLE and the path's data flows again (then SQA_NOT_VIOLATED). */
export function pathStatus(
  path: PathRecord,
  available: readonly AvailableSpan[],
  settings: PathDataSettings,
  nowMs: number,
): 'SQA_NOT_VIOLATED' | 'INDETERMINATE' {
  const current = flowSpans(path, available, settings).at(-1);
  return current !== undefined && current.to === undefined && current.from <= nowMs
    ? 'SQA_NOT_VIOLATED'
    : 'INDETERMINATE';
}

export function pathDataRecord(
  path: PathRecord,
  available: readonly AvailableSpan[],
  settings: PathDataSettings,
  range: SecondsRange,
  nowMs: number,
): PathDataRecord {
  const aggregation = aggregationFor(range, nowMs);
  const times = elementTimes(flowSpans(path, available, settings), settings, range, aggregation, nowMs);
  const arrays = (direction: number): MetricArrays =>
    Object.fromEntries(
      PATH_METRICS.map((metric, index) => [
        metric,
        times.map((time) => ({ time, value: valueOf(path.id, index, direction, time, RANGES[metric]) })),
      ]),
    ) as MetricArrays;
  const oneWay = path.instrumentation === 'ONE_WAY';
  return {
    pathId: path.id,
    instrumentation: path.instrumentation,
    aggregation,
    data: oneWay ? arrays(0) : null,
    dataInbound: oneWay ? null : arrays(1),
    dataOutbound: oneWay ? null : arrays(2),
  };
}

/** The element times (Unix s) in the range: every sample, or the start of every hour/day holding one. */
function elementTimes(
  flows: readonly { from: number; to: number | undefined }[],
  settings: PathDataSettings,
  range: SecondsRange,
  aggregation: Aggregation,
  nowMs: number,
): number[] {
  const lowMs = range.from * 1000;
  const highMs = Math.min(range.to * 1000 + 999, nowMs);
  const bucketS = aggregation === null ? undefined : aggregation * 60;
  const times = new Set<number>();
  for (const flow of flows) {
    // Samples at flow.from + k * sampleMs, inside the flow, the range and the past.
    const end = Math.min(flow.to === undefined ? Infinity : flow.to - 1, highMs);
    const first = Math.max(0, Math.ceil((lowMs - flow.from) / settings.sampleMs));
    const last = Math.floor((end - flow.from) / settings.sampleMs);
    if (last < first) continue;
    if (bucketS === undefined) {
      for (let k = first; k <= last; k++) times.add(Math.floor((flow.from + k * settings.sampleMs) / 1000));
    } else {
      // An aggregate is dated by its hour or day, but never before the range asked (it holds no sample from before).
      // A sample comes far more often than an hour, so every bucket between the first and the last holds one.
      const firstBucket = Math.floor((flow.from + first * settings.sampleMs) / 1000 / bucketS);
      const lastBucket = Math.floor((flow.from + last * settings.sampleMs) / 1000 / bucketS);
      for (let b = firstBucket; b <= lastBucket; b++) times.add(Math.max(b * bucketS, range.from));
    }
  }
  return [...times].sort((a, b) => a - b);
}

/** A value in [low, high] from a 32-bit hash of its coordinates, 3 decimals. */
function valueOf(
  pathId: number,
  metric: number,
  direction: number,
  time: number,
  [low, high]: readonly [number, number],
) {
  let h = Math.imul(pathId ^ 0x9e3779b9, 0x85ebca6b) ^ Math.imul(metric + 1, 0xc2b2ae35);
  h = Math.imul(h ^ (direction + 7), 0x27d4eb2f) ^ time;
  h = Math.imul(h ^ (h >>> 15), 0x2c1b3c6d);
  h = Math.imul(h ^ (h >>> 12), 0x297a2d39);
  const unit = ((h ^ (h >>> 15)) >>> 0) / 0x1_0000_0000;
  return Math.round((low + (high - low) * unit) * 1000) / 1000;
}
