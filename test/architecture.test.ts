import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { dirname, join, normalize, relative } from 'node:path';
import { fileURLToPath } from 'node:url';
import ts from 'typescript';
import { describe, expect, it } from 'vitest';

/**
 * The layering of src/ as a test: every relative import and export-from of every source file,
 * type-only ones included (a type import still couples two modules), read by TypeScript's own
 * import scanner (so a specifier in a comment or a string does not count), then three rules:
 * no import cycle, stages import only earlier stages, and the simulator stands on its own.
 * Each rule is a pure function over the graph; the self-tests at the end prove each can fail.
 */

const SRC = fileURLToPath(new URL('../src/', import.meta.url));

/** File -> the files it imports, both as paths relative to src/ (`apply/run-step.ts`). */
type ImportGraph = Map<string, Set<string>>;

/** Relative specifiers of import, import type, export-from, side-effect import and import(). */
function importSpecifiers(source: string): string[] {
  return ts
    .preProcessFile(source, true, true)
    .importedFiles.map((f) => f.fileName)
    .filter((spec) => spec.startsWith('.'));
}

function sourceFiles(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((entry) => {
    const path = join(dir, entry.name);
    if (entry.isDirectory()) return sourceFiles(path);
    return entry.name.endsWith('.ts') ? [path] : [];
  });
}

function readGraph(): { graph: ImportGraph; unresolved: string[] } {
  const graph: ImportGraph = new Map();
  const unresolved: string[] = [];
  for (const file of sourceFiles(SRC)) {
    const from = relative(SRC, file);
    const targets = new Set<string>();
    for (const spec of importSpecifiers(readFileSync(file, 'utf8'))) {
      // ESM TypeScript imports name the emitted .js file; the source beside it is .ts.
      const target = normalize(join(dirname(file), spec.replace(/\.js$/, '.ts')));
      if (!existsSync(target)) unresolved.push(`${from} -> ${spec}`);
      else targets.add(relative(SRC, target));
    }
    graph.set(from, targets);
  }
  return { graph, unresolved };
}

/**
 * Every cycle a depth-first walk meets, each as the files around it (first file repeated at the
 * end): one per import that leads back into the walk's current path.
 */
function findCycles(graph: ImportGraph): string[][] {
  const cycles: string[][] = [];
  const state = new Map<string, 'open' | 'done'>();
  const path: string[] = [];
  const visit = (file: string): void => {
    state.set(file, 'open');
    path.push(file);
    for (const next of [...(graph.get(file) ?? [])].sort()) {
      if (state.get(next) === 'open') cycles.push([...path.slice(path.indexOf(next)), next]);
      else if (state.get(next) === undefined) visit(next);
    }
    path.pop();
    state.set(file, 'done');
  };
  for (const file of [...graph.keys()].sort()) if (state.get(file) === undefined) visit(file);
  return cycles;
}

const folderOf = (file: string): string => (file.includes('/') ? (file.split('/')[0] ?? file) : '(src root)');

/** The basics every folder may import. */
const BASE = ['core', 'admin-api'];
/** The pipeline, in order: a stage imports only the stages before it. */
const PIPELINE = ['ingest', 'config', 'signature', 'certs', 'plan', 'apply', 'report'];

/** Per folder, the other folders it may import. A folder missing here is itself a finding. */
const MAY_IMPORT: Record<string, readonly string[]> = {
  core: [],
  'admin-api': ['core'],
  ...Object.fromEntries(
    PIPELINE.map((stage, index) => [
      stage,
      [
        ...BASE,
        ...PIPELINE.slice(0, index),
        ...(stage === 'apply' ? ['client', 'service', 'preflight', 'observe'] : []),
      ],
    ]),
  ),
  // The transport both API clients stand on (connector, one exchange, its errors): below them,
  // above core only, so neither client copies it and it knows no API's model.
  http: ['core'],
  client: [...BASE, 'http'],
  // The data API client: beside the Admin API client, for apply's post-check and the CLI.
  service: [...BASE, 'http'],
  // The read-only status page: it serves what the agent hands it (the status shape is in core).
  'status-page': ['core', 'report'],
  // `mpprov stick build`: renders sticks and checks each with the laptop's own validator and signer.
  'stick-build': [...BASE, 'ingest', 'config', 'signature', 'certs'],
  // `mpprov preflight`: the stick's 802.1X tried from the laptop's own port, before any device is
  // touched. It reads a validated stick and never speaks to a device.
  preflight: [...BASE, 'ingest', 'config', 'signature', 'certs'],
  agent: [...BASE, ...PIPELINE, 'client', 'service', 'status-page', 'preflight', 'observe'],
  cli: [
    ...BASE,
    ...PIPELINE,
    'client',
    'service',
    'agent',
    'simulator',
    'notify',
    'stick-build',
    'preflight',
    'observe',
  ],
  // The events receiver: agent.yaml's events block (config) and the observer endpoints (service).
  observe: [...BASE, 'config', 'service'],
  simulator: BASE,
  // `mpprov notify`, the per-user desktop companion: it reads the agent's status file, whose
  // schema is in core, and nothing else of the product.
  notify: ['core'],
};

/** Cross-folder imports the table does not allow, as `from -> to` lines. */
function layerViolations(graph: ImportGraph, skip: readonly string[] = []): string[] {
  const found: string[] = [];
  for (const [from, targets] of graph) {
    const folder = folderOf(from);
    if (skip.includes(folder)) continue;
    const allowed = MAY_IMPORT[folder];
    if (allowed === undefined) {
      found.push(`${from}: its folder ${folder} has no place in the layering (add it to MAY_IMPORT)`);
      continue;
    }
    for (const to of targets) {
      const target = folderOf(to);
      if (target !== folder && !allowed.includes(target)) found.push(`${from} -> ${to}`);
    }
  }
  return found.sort();
}

/** The simulator must be able to disagree with the product: it imports only admin-api and core. */
function simulatorViolations(graph: ImportGraph): string[] {
  const found: string[] = [];
  for (const [from, targets] of graph) {
    if (folderOf(from) !== 'simulator') continue;
    for (const to of targets) if (!['simulator', ...BASE].includes(folderOf(to))) found.push(`${from} -> ${to}`);
  }
  return found.sort();
}

describe('the layering of src/', () => {
  const { graph, unresolved } = readGraph();

  it('reads every source file and resolves every relative import', () => {
    expect(unresolved).toEqual([]);
    // The scan must see the code base, or every rule below passes on nothing.
    expect(graph.size).toBeGreaterThan(100);
    const crossFolder = [...graph].flatMap(([from, targets]) =>
      [...targets].filter((to) => folderOf(to) !== folderOf(from)),
    );
    expect(crossFolder.length).toBeGreaterThan(100);
    expect(new Set([...graph.keys()].map(folderOf))).toEqual(new Set(Object.keys(MAY_IMPORT)));
  });

  it('has no import cycle', () => {
    expect(findCycles(graph)).toEqual([]);
  });

  it('imports only forward: ingest -> config -> certs -> plan -> apply -> report; core and admin-api for all; http for client and service; client for apply, agent and cli', () => {
    // The simulator has its own, stricter rule below.
    expect(layerViolations(graph, ['simulator'])).toEqual([]);
  });

  it('keeps the simulator independent: it imports only admin-api and core', () => {
    expect(simulatorViolations(graph)).toEqual([]);
  });
});

// The rules above pass on a good code base; these show each one fails on a bad one.
describe('the layering rules themselves', () => {
  const graphOf = (edges: Record<string, string[]>): ImportGraph =>
    new Map(Object.entries(edges).map(([from, to]) => [from, new Set(to)]));

  it('the scan sees every form of import and nothing in comments or strings', () => {
    const source = [
      "import type { A } from './a.js';",
      "import { B } from '../b.js';",
      "export * from './c.js';",
      "export { D } from './d.js';",
      "import './e.js';",
      "const f = await import('./f.js');",
      "import { z } from 'zod';",
      "// import { no } from './comment.js';",
      'const text = "import { no } from \'./string.js\'";',
    ].join('\n');
    expect(importSpecifiers(source)).toEqual(['./a.js', '../b.js', './c.js', './d.js', './e.js', './f.js']);
  });

  it('finds every cycle and names its files', () => {
    const graph = graphOf({
      'apply/a.ts': ['apply/b.ts'],
      'apply/b.ts': ['apply/c.ts', 'apply/d.ts'],
      'apply/c.ts': ['apply/a.ts'],
      'apply/d.ts': ['apply/d.ts'],
    });
    expect(findCycles(graph)).toEqual([
      ['apply/a.ts', 'apply/b.ts', 'apply/c.ts', 'apply/a.ts'],
      ['apply/d.ts', 'apply/d.ts'],
    ]);
    // Two ways to one file are no cycle.
    expect(
      findCycles(
        graphOf({ 'apply/a.ts': ['apply/b.ts', 'apply/c.ts'], 'apply/b.ts': ['apply/c.ts'], 'apply/c.ts': [] }),
      ),
    ).toEqual([]);
  });

  it('finds a backwards import, a client import outside apply/agent/cli, an import of the cli, and an unknown folder', () => {
    const graph = graphOf({
      'plan/build-plan.ts': ['apply/run-step.ts', 'config/index.ts', 'admin-api/index.ts'],
      'config/load-stick.ts': ['client/index.ts'],
      'report/render-plan.ts': ['plan/index.ts'],
      'agent/daemon.ts': ['cli/main.ts', 'client/index.ts'],
      'gadgets/thing.ts': [],
    });
    expect(layerViolations(graph)).toEqual([
      'agent/daemon.ts -> cli/main.ts',
      'config/load-stick.ts -> client/index.ts',
      'gadgets/thing.ts: its folder gadgets has no place in the layering (add it to MAY_IMPORT)',
      'plan/build-plan.ts -> apply/run-step.ts',
    ]);
  });

  it('finds a simulator import of product code beyond admin-api and core', () => {
    const graph = graphOf({
      'simulator/file-upload.ts': ['certs/detect.ts', 'admin-api/vocabulary.ts', 'simulator/stanza.ts'],
      'simulator/simulator.ts': ['core/errors.ts', 'client/index.ts'],
    });
    expect(simulatorViolations(graph)).toEqual([
      'simulator/file-upload.ts -> certs/detect.ts',
      'simulator/simulator.ts -> client/index.ts',
    ]);
  });

  it('keeps the transport below both clients: http imports only core, and the simulator may not import it', () => {
    const graph = graphOf({
      'http/send-request.ts': ['core/errors.ts', 'admin-api/wire-shape.ts', 'client/device-errors.ts'],
      'service/service-request.ts': ['http/index.ts', 'client/device-request.ts'],
      'client/device-request.ts': ['http/index.ts'],
      'plan/build-plan.ts': ['http/index.ts'],
    });
    expect(layerViolations(graph)).toEqual([
      'http/send-request.ts -> admin-api/wire-shape.ts',
      'http/send-request.ts -> client/device-errors.ts',
      'plan/build-plan.ts -> http/index.ts',
      'service/service-request.ts -> client/device-request.ts',
    ]);
    expect(simulatorViolations(graphOf({ 'simulator/simulator.ts': ['http/index.ts'] }))).toEqual([
      'simulator/simulator.ts -> http/index.ts',
    ]);
  });
});
