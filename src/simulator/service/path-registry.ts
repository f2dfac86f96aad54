/**
 * The network paths the simulated service holds. A path is identified by (source MP, target):
 * the same pair twice is refused, as the model's service does. Records are plain data; their
 * measurements are derived on demand from the source MP's AVAILABLE spans (path-data.ts).
 */

export type Instrumentation = 'ONE_WAY' | 'TWO_WAY';

export interface PathRecord {
  id: number;
  pathName: string;
  /** The source MP's `name` as the service has it (whatever case the creator wrote). */
  sourceAppliance: string;
  /** The source MP's id: its AVAILABLE spans drive the path's data. */
  sourceId: number;
  target: string;
  orgId: number;
  instrumentation: Instrumentation;
  targetLocation?: string;
  /** Epoch ms of creation. */
  createdAt: number;
}

export type NewPath = Omit<PathRecord, 'id' | 'targetLocation'>;

/** A path as GET /v3/path lists it and POST /v3/path answers it. */
export function pathJson(path: PathRecord): Record<string, unknown> {
  const { id, pathName, sourceAppliance, target, orgId, instrumentation, targetLocation } = path;
  return {
    id,
    pathName,
    sourceAppliance,
    target,
    orgId,
    instrumentation,
    ...(targetLocation === undefined ? {} : { targetLocation }),
  };
}

export class PathRegistry {
  readonly #byId = new Map<number, PathRecord>();
  readonly #byPair = new Map<string, PathRecord>();
  #nextId = 501;

  /** The new path, or the one that already joins this source and target. */
  create(spec: NewPath): { created: PathRecord } | { existing: PathRecord } {
    const pair = pairKey(spec.sourceId, spec.target);
    const existing = this.#byPair.get(pair);
    if (existing !== undefined) return { existing };
    const path: PathRecord = { ...spec, id: this.#nextId++ };
    this.#byId.set(path.id, path);
    this.#byPair.set(pair, path);
    return { created: path };
  }

  get(id: number): PathRecord | undefined {
    return this.#byId.get(id);
  }

  /** Every path in creation order. */
  list(): PathRecord[] {
    return [...this.#byId.values()];
  }

  setTargetLocation(id: number, location: string): PathRecord | undefined {
    const path = this.#byId.get(id);
    if (path !== undefined) path.targetLocation = location;
    return path;
  }

  delete(id: number): PathRecord | undefined {
    const path = this.#byId.get(id);
    if (path === undefined) return undefined;
    this.#byId.delete(id);
    this.#byPair.delete(pairKey(path.sourceId, path.target));
    return path;
  }

  clear(): void {
    this.#byId.clear();
    this.#byPair.clear();
  }
}

/** Targets are host names or addresses: compared without case, as DNS names are. */
function pairKey(sourceId: number, target: string): string {
  return `${sourceId}\n${target.toLowerCase()}`;
}
