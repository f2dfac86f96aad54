import { readFile } from 'node:fs/promises';
import { dirname, extname, resolve } from 'node:path';
import { parse as parseYaml } from 'yaml';
import { z } from 'zod';
import { DeviceConfig } from './device-config.js';
import { builtInModel, BUILT_IN_MODELS, DEFAULT_MODEL, type DeviceModel, type PhysicalPort } from './device-model.js';
import { describeIssues, integer, list, nonEmpty, oneOf } from './field-sentences.js';
import { fileKindFor, slotTakes } from './file-kind.js';
import { isSimulatorError, SimulatorError, SimulatorErrorCode, unreadableFile } from './simulator-error.js';
import { FILE_SLOTS, type FileSlot } from './stanza.js';

/**
 * A device to simulate: its model, ports and starting configuration. Comes from a built-in
 * model (`--model`) or a YAML/JSON file (`--device FILE`), paths in it relative to the file.
 */
export interface DeviceDescription {
  model: DeviceModel;
  /** Starting active stanzas, flat as POST /interface/ takes them. */
  active: unknown[];
  /** Starting files, active from the start. */
  files: { slot: FileSlot; name: string; content: Buffer }[];
  /** `show_dot1x_state`: GET /interface/ shows `dot1x_state` (a rehearsal aid beyond the model). */
  showDot1xState?: boolean;
}

/** Default start: eth0 gets its address from DHCP. */
const DEFAULT_ACTIVE = [{ name: 'eth0', family: 'inet', method: 'dhcp' }] as const;

export function describeBuiltInModel(name: string = DEFAULT_MODEL): DeviceDescription {
  const model = builtInModel(name);
  if (model === undefined) {
    throw new SimulatorError(
      SimulatorErrorCode.Usage,
      `Unknown model "${name}"; built-in models: ${Object.keys(BUILT_IN_MODELS).join(', ')}.`,
    );
  }
  return { model, active: DEFAULT_ACTIVE.map((s) => ({ ...s })), files: [] };
}

const PortFile = z.union(
  [
    z.strictObject({ wireless: z.literal(true, 'must be true') }),
    z.strictObject({
      autoneg: z.boolean('must be true or false'),
      speeds: list(integer(1, 1_000_000, 'a speed in Mb/s'), 'a list of speeds in Mb/s'),
      duplex: list(oneOf(['half', 'full']), 'a list of "half" and "full"'),
    }),
  ],
  { error: () => 'must be { wireless: true } or { autoneg, speeds, duplex }' },
);

const DeviceFile = z.strictObject({
  model: nonEmpty('a model name'),
  interfaces: z
    .record(z.string().regex(/^[A-Za-z][A-Za-z0-9]*$/, 'must be an interface name such as eth0'), PortFile)
    .optional(),
  active: z.array(z.unknown(), 'must be a list of stanzas').optional(),
  files: list(
    z.strictObject({ slot: oneOf(FILE_SLOTS), name: nonEmpty('a file name'), path: nonEmpty('a file path') }),
    'a list of files',
  ).optional(),
  show_dot1x_state: z.boolean('must be true or false').optional(),
});

export async function loadDeviceDescription(file: string): Promise<DeviceDescription> {
  const invalid = (message: string, cause?: unknown) =>
    new SimulatorError(
      SimulatorErrorCode.FileInvalid,
      `Device file ${file}: ${message}`,
      cause === undefined ? undefined : { cause },
    );
  let text: string;
  try {
    text = await readFile(file, 'utf8');
  } catch (cause) {
    throw unreadableFile('device file', file, cause);
  }
  let raw: unknown;
  try {
    raw = extname(file).toLowerCase() === '.json' ? JSON.parse(text) : parseYaml(text, { logLevel: 'error' });
  } catch (cause) {
    throw invalid('not valid YAML or JSON.', cause);
  }
  const parsed = DeviceFile.safeParse(raw);
  if (!parsed.success) throw invalid(describeIssues(parsed.error.issues));
  const d = parsed.data;
  let model: DeviceModel;
  if (d.interfaces !== undefined) {
    const interfaces: Record<string, PhysicalPort> = {};
    for (const [name, port] of Object.entries(d.interfaces)) {
      interfaces[name] = 'wireless' in port ? { kind: 'wireless' } : { kind: 'wired', ...port };
    }
    model = { model: d.model, interfaces };
  } else {
    const builtIn = builtInModel(d.model);
    if (builtIn === undefined) throw invalid(`model "${d.model}" is not built in, so "interfaces" is required.`);
    model = builtIn;
  }
  const files: DeviceDescription['files'] = [];
  for (const entry of d.files ?? []) {
    const path = resolve(dirname(file), entry.path);
    try {
      files.push({ slot: entry.slot, name: entry.name, content: await readFile(path) });
    } catch (cause) {
      throw new SimulatorError(SimulatorErrorCode.FileUnreadable, `Device file ${file}: cannot read ${path}.`, {
        cause,
      });
    }
  }
  const description: DeviceDescription = {
    model,
    active: d.active ?? DEFAULT_ACTIVE.map((s) => ({ ...s })),
    files,
    ...(d.show_dot1x_state !== undefined ? { showDot1xState: d.show_dot1x_state } : {}),
  };
  const problem = checkDescription(description);
  if (problem !== undefined) throw invalid(problem);
  return description;
}

/**
 * Builds the starting configuration; the same rules as the API (file kinds as an upload, stanzas
 * as POST /interface/), so a bad start is refused early.
 */
export function configFromDescription(description: DeviceDescription): DeviceConfig {
  const config = new DeviceConfig(description.model);
  for (const [i, file] of description.files.entries()) {
    const kind = fileKindFor(file.slot, file.content);
    if (kind === undefined) {
      throw new SimulatorError(
        SimulatorErrorCode.StartRefused,
        `files[${i}]: slot "${file.slot}" takes ${slotTakes(file.slot)}; "${file.name}" is not one.`,
      );
    }
    config.seedFile(file.slot, file.name, { content: file.content, kind });
  }
  for (const [i, stanza] of description.active.entries()) {
    const outcome = config.seedActive(stanza);
    if (!outcome.ok) {
      throw new SimulatorError(
        SimulatorErrorCode.StartRefused,
        `Starting configuration, active[${i}]: ${outcome.error}`,
      );
    }
  }
  return config;
}

function checkDescription(description: DeviceDescription): string | undefined {
  try {
    configFromDescription(description);
    return undefined;
  } catch (error) {
    if (isSimulatorError(error)) return error.message;
    throw error;
  }
}
