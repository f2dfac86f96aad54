import { readFile, stat } from 'node:fs/promises';
import type { Problem } from '../core/problem.js';
import { visibleText } from '../core/visible-text.js';
import { csvInventory } from './csv-inventory.js';
import { decodeUtf8 } from './decode-utf8.js';
import type { Inventory, InventoryMp } from './inventory.js';
import { problemAt } from './place.js';
import { yamlInventory } from './yaml-inventory.js';

/** 10 000 rows of a wide spreadsheet are a few MiB; a file many times that is not an inventory. */
const MAX_INVENTORY_BYTES = 32 * 1024 * 1024;

/**
 * Reads an inventory (YAML, or CSV by its `.csv` name) into sites of monitoring points with
 * every problem located. A duplicate MP name names both places and refuses both sites.
 */
export async function readInventory(file: string): Promise<Inventory> {
  const refused = (problem: Problem): Inventory => ({
    file,
    sites: new Map(),
    problems: [problem],
    refusedSites: new Set(),
    refusedWhole: true,
  });
  let bytes: Buffer;
  try {
    const info = await stat(file);
    if (!info.isFile()) return refused(problemAt({ file, line: 1, column: 1 }, 'the inventory is not a file'));
    if (info.size > MAX_INVENTORY_BYTES)
      return refused(
        problemAt({ file, line: 1, column: 1 }, `the inventory is ${info.size} bytes; the limit is 32 MiB`),
      );
    bytes = await readFile(file);
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code ?? 'error';
    return refused(problemAt({ file, line: 1, column: 1 }, `the inventory cannot be read (${code})`));
  }
  const text = decodeUtf8(bytes, file);
  if (!text.ok) return refused(text.problem);
  const read = file.toLowerCase().endsWith('.csv') ? csvInventory(text.text, file) : yamlInventory(text.text, file);
  const problems = [...read.problems];
  const refusedSites = new Set(read.refusedSites);
  const byName = new Map<string, InventoryMp>();
  for (const mp of read.mps) {
    const first = byName.get(mp.name);
    if (first === undefined) {
      byName.set(mp.name, mp);
      continue;
    }
    const name = visibleText(mp.name);
    const at = (where: InventoryMp) => `${where.place.file}:${where.place.line}:${where.place.column}`;
    problems.push(
      problemAt(
        mp.vars.get('name')?.place ?? mp.place,
        `the monitoring point name '${name}' is used twice: here (site ${mp.site}) and at ${at(first)} (site ${first.site}); neither site gets a stick`,
        'names of monitoring points are unique across the inventory',
      ),
    );
    refusedSites.add(mp.site);
    refusedSites.add(first.site);
  }
  const sites = new Map<string, InventoryMp[]>();
  for (const mp of read.mps) {
    const list = sites.get(mp.site) ?? [];
    list.push(mp);
    sites.set(mp.site, list);
  }
  return { file, sites, problems, refusedSites, refusedWhole: read.refusedWhole };
}
