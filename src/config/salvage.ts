import { salvageBySchema } from './salvage-by-schema.js';
import { StickFile } from './schema.js';

/**
 * The stick's file as far as its schema accepts it (salvage-by-schema.ts), for the rules and the
 * certificate checks when the schema refused part of it. Typed as the model though a refused
 * required key is absent and a refused list entry is undefined: the rules check what they read.
 */
export function salvageStick(data: unknown): StickFile | undefined {
  const salvaged = salvageBySchema(StickFile, data);
  if (salvaged === null || typeof salvaged !== 'object') return undefined;
  const points = (salvaged as Record<string, unknown>).monitoring_points;
  if (!Array.isArray(points)) return undefined;
  // Rules look at every Monitoring Point; one refused as a whole is judged as an empty block.
  return { ...(salvaged as StickFile), monitoring_points: points.map((mp: unknown) => mp ?? {}) } as StickFile;
}
