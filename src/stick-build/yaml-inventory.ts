import { type Document, isMap, isScalar, isSeq, LineCounter, type Node, parseDocument } from 'yaml';
import type { Problem } from '../core/problem.js';
import { visibleText } from '../core/visible-text.js';
import { type InventoryMp, SITE_HINT, SITE_NAME, VARIABLE_HINT, VARIABLE_NAME, type Variable } from './inventory.js';
import type { RowsRead } from './csv-inventory.js';
import { type Place, positionIn, problemAt } from './place.js';

const TOP_KEYS = new Set(['version', 'defaults', 'sites']);
const SITE_KEYS = new Set(['vars', 'monitoring_points']);

/**
 * The YAML inventory (docs/rolling-out.md): `version: 1`, `defaults`, `sites` of `vars` and
 * `monitoring_points`. Each problem is located at its node; a problem inside a site refuses that
 * site; one above the sites refuses the whole inventory.
 */
export function yamlInventory(text: string, file: string): RowsRead {
  const lines = new LineCounter();
  const doc = parseDocument(text, { lineCounter: lines, uniqueKeys: true, prettyErrors: false, logLevel: 'error' });
  const problems: Problem[] = [];
  const refusedSites = new Set<string>();
  const mps: InventoryMp[] = [];
  const placeOf = (node: Node | null | undefined, fallback?: Place): Place => {
    const offset = node?.range?.[0];
    if (offset === undefined) return fallback ?? { file, line: 1, column: 1 };
    const { line, col } = lines.linePos(offset);
    return { file, line, column: col };
  };
  if (doc.errors.length > 0) {
    for (const error of doc.errors.slice(0, 20)) {
      problems.push(
        problemAt(
          { file, ...positionIn(text, error.pos[0]) },
          `not YAML: ${error.code.toLowerCase().replaceAll('_', ' ')}`,
        ),
      );
    }
    return { mps, problems, refusedSites, refusedWhole: true };
  }
  const root = doc.contents;
  if (!isMap(root)) {
    problems.push(problemAt(placeOf(root), 'the inventory must be a mapping with version, defaults and sites'));
    return { mps, problems, refusedSites, refusedWhole: true };
  }
  let whole = false;
  const refuseWhole = (problem: Problem): void => {
    problems.push(problem);
    whole = true;
  };
  for (const item of root.items) {
    const key = isScalar(item.key) ? String(item.key.value) : '';
    if (!TOP_KEYS.has(key))
      refuseWhole(
        problemAt(placeOf(item.key), `unknown key '${visibleText(key)}'`, 'the keys are version, defaults and sites'),
      );
  }
  const version: unknown = root.get('version', true);
  if (!isScalar(version) || version.value !== 1)
    refuseWhole(
      problemAt(placeOf((version as Node | undefined) ?? root), 'version must be 1', 'write version: 1 at the top'),
    );
  const defaults = variablesOf(doc, root.get('defaults', true), 'defaults', placeOf, refuseWhole);
  const sites = root.get('sites', true);
  if (!isMap(sites)) {
    refuseWhole(
      problemAt(placeOf(sites ?? root), 'sites must be a mapping of site names to their vars and monitoring_points'),
    );
    return { mps, problems, refusedSites, refusedWhole: true };
  }
  for (const siteItem of sites.items) {
    const keyNode = siteItem.key as Node;
    const site = isScalar(keyNode) ? String(keyNode.value) : '';
    const refuse = (problem: Problem): void => {
      problems.push(problem);
      refusedSites.add(site);
    };
    if (!SITE_NAME.test(site)) {
      problems.push(problemAt(placeOf(keyNode), `the site name '${visibleText(site)}' is not allowed`, SITE_HINT));
      continue;
    }
    const body = siteItem.value as Node | null;
    if (!isMap(body)) {
      refuse(
        problemAt(placeOf(body, placeOf(keyNode)), `site ${site} must be a mapping with vars and monitoring_points`),
      );
      continue;
    }
    for (const item of body.items) {
      const key = isScalar(item.key) ? String(item.key.value) : '';
      if (!SITE_KEYS.has(key))
        refuse(
          problemAt(
            placeOf(item.key as Node),
            `unknown key '${visibleText(key)}' in site ${site}`,
            'a site has vars and monitoring_points',
          ),
        );
    }
    const siteVars = variablesOf(doc, body.get('vars', true), `sites.${site}.vars`, placeOf, refuse);
    const list = body.get('monitoring_points', true);
    if (!isSeq(list) || list.items.length === 0) {
      refuse(problemAt(placeOf(list ?? body), `site ${site} needs a list of monitoring_points`));
      continue;
    }
    for (const entry of list.items) {
      const own = variablesOf(doc, entry, `sites.${site}.monitoring_points`, placeOf, refuse);
      const vars = new Map<string, Variable>([...defaults, ...siteVars, ...own]);
      vars.set('site', { value: site, place: placeOf(keyNode) });
      const place = placeOf(entry as Node);
      let complete = true;
      for (const required of ['name', 'url']) {
        const value = own.get(required)?.value;
        if (typeof value !== 'string' || value === '') {
          complete = false;
          refuse(problemAt(own.get(required)?.place ?? place, `a monitoring point needs a ${required} (text)`));
        }
      }
      if (complete) mps.push({ site, name: String(own.get('name')?.value), place, vars });
    }
  }
  return { mps, problems, refusedSites, refusedWhole: whole };
}

/** A mapping of variables (defaults, a site's vars, an MP's keys), each with its node's place. */
function variablesOf(
  doc: Document,
  node: unknown,
  where: string,
  placeOf: (node: Node | null | undefined) => Place,
  refuse: (problem: Problem) => void,
): Map<string, Variable> {
  const vars = new Map<string, Variable>();
  if (node === undefined || node === null) return vars;
  if (!isMap(node)) {
    refuse(problemAt(placeOf(node as Node), `${where} must be a mapping of variables`));
    return vars;
  }
  for (const item of node.items) {
    const key = isScalar(item.key) ? String(item.key.value) : '';
    if (!VARIABLE_NAME.test(key)) {
      refuse(problemAt(placeOf(item.key as Node), `'${visibleText(key)}' is not a variable name`, VARIABLE_HINT));
      continue;
    }
    const value = item.value as Node | null;
    let js: unknown;
    try {
      js = value === null ? null : value.toJS(doc, { maxAliasCount: 100 });
    } catch {
      // The yaml library throws when aliases expand past the count ("billion laughs"): a located
      // problem, never a crash or a value of a billion nodes.
      refuse(
        problemAt(
          placeOf(value ?? (item.key as Node)),
          `'${key}' expands YAML aliases (*name) too many times`,
          'write the value out instead of repeating aliases',
        ),
      );
      continue;
    }
    vars.set(key, { value: js, place: placeOf(value ?? (item.key as Node)) });
  }
  return vars;
}
