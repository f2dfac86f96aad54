import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { AgentConfigFile, loadAgentConfig, loadStick, StickFile } from '../../src/config/index.js';
import { tempFolder } from '../support/temp-folder.js';

/**
 * Every key of every map is judged, whatever its name: names every JavaScript object already
 * carries (`__proto__`, `constructor`, `toString`, ...) are entries like any other, and
 * `__proto__`, which zod's record drops without a word, is refused at the key with its value
 * still checked. An interface named `__proto__` with `method: statc` made a "valid" stick.
 */

const FINGERPRINT = `"${'AB:'.repeat(31)}AB"`;

const OBJECT_NAMES = [
  '__proto__',
  'constructor',
  'toString',
  'hasOwnProperty',
  'valueOf',
  'isPrototypeOf',
  '__defineGetter__',
] as const;

/** The dotted paths of every map (zod record) in a schema, array items as []. */
function mapsOf(schema: z.ZodType, path = ''): string[] {
  let inner: z.ZodType = schema;
  while (inner instanceof z.ZodOptional || inner instanceof z.ZodDefault || inner instanceof z.ZodNullable)
    inner = inner.unwrap() as z.ZodType;
  if (inner instanceof z.ZodObject)
    return Object.entries(inner.shape as Record<string, z.ZodType>).flatMap(([key, child]) =>
      mapsOf(child, path === '' ? key : `${path}.${key}`),
    );
  if (inner instanceof z.ZodArray) return mapsOf(inner.element as z.ZodType, `${path}[]`);
  if (inner instanceof z.ZodRecord) return [path, ...mapsOf(inner.valueType as z.ZodType, `${path}.*`)];
  return [];
}

const where = (problems: readonly { path: string; message: string }[]) => problems.map((p) => `${p.path} ${p.message}`);

describe('every key of every map is judged', () => {
  it('the maps tested here are every map the two schemas have', () => {
    expect(mapsOf(StickFile)).toEqual(['monitoring_points[].interfaces']);
    expect(mapsOf(AgentConfigFile)).toEqual(['devices']);
  });

  it.each(OBJECT_NAMES)('an interface named %s is checked like any other', async (name) => {
    const dir = tempFolder('map-keys');
    writeFileSync(
      join(dir, 'mpprov.yaml'),
      [
        'version: 1',
        'monitoring_points:',
        '  - name: mp1',
        '    url: https://192.0.2.10',
        '    password: Map-Keys-Secret-1',
        `    tls: { fingerprint_sha256: ${FINGERPRINT} }`,
        '    interfaces:',
        '      eth0:',
        '        ipv4: { method: dhcp }',
        `      ${name}:`,
        '        ipv4: { method: statc }',
        '',
      ].join('\n'),
    );
    const loaded = await loadStick(join(dir, 'mpprov.yaml'), { label: 'mpprov.yaml' });
    expect(loaded.model).toBeUndefined();
    const at = `monitoring_points[0].interfaces.${name}`;
    const statc = `${at}.ipv4.method "statc" is not one of: dhcp, static, manual`;
    if (name === '__proto__') {
      expect(where(loaded.problems)).toEqual([
        `${at} '__proto__' cannot name an entry here: JavaScript gives every object a key of that name`,
        statc,
      ]);
      expect(loaded.problems[0]).toMatchObject({ file: 'mpprov.yaml', line: 10, column: 7, hint: 'rename this entry' });
    } else {
      expect(where(loaded.problems)).toContain(statc);
    }
  });

  it.each(OBJECT_NAMES)('a valid interface named %s stays in the model, or is refused', async (name) => {
    const dir = tempFolder('map-keys');
    writeFileSync(
      join(dir, 'mpprov.yaml'),
      `version: 1\nmonitoring_points:\n  - name: mp1\n    url: https://192.0.2.10\n    password: Map-Keys-Secret-1\n    tls: { fingerprint_sha256: ${FINGERPRINT} }\n    interfaces:\n      ${name}:\n        ipv4: { method: dhcp }\n`,
    );
    const loaded = await loadStick(join(dir, 'mpprov.yaml'));
    if (name === '__proto__') {
      expect(where(loaded.problems)).toEqual([
        `monitoring_points[0].interfaces.__proto__ '__proto__' cannot name an entry here: JavaScript gives every object a key of that name`,
      ]);
      expect(loaded.model).toBeUndefined();
    } else if (name.startsWith('_')) {
      // Judged by the interface rules as any name: no interface name starts with '_'.
      expect(where(loaded.problems)).toEqual([
        `monitoring_points[0].interfaces.${name} '${name}' is not a valid interface name`,
      ]);
    } else {
      expect(where(loaded.problems)).toEqual([]);
      expect(Object.keys(loaded.model?.monitoring_points[0]?.interfaces ?? {})).toEqual([name]);
    }
  });

  it.each(OBJECT_NAMES.filter((n) => n !== '__proto__'))(
    'a VLAN on a link named %s that the file does not define is not judged against what every object has',
    async (name) => {
      const dir = tempFolder('map-keys');
      writeFileSync(join(dir, 'key.pem'), 'not a key');
      writeFileSync(
        join(dir, 'mpprov.yaml'),
        [
          'version: 1',
          'monitoring_points:',
          '  - name: mp1',
          '    url: https://192.0.2.10',
          '    password: Map-Keys-Secret-1',
          `    tls: { fingerprint_sha256: ${FINGERPRINT} }`,
          '    interfaces:',
          `      ${name}.10:`,
          `        vlan: { link: ${name}, id: 10 }`,
          '        ipv4: { method: dhcp }',
          '        dot1x: { eap: md5, identity: mp1, password: Dot1x-Secret-42 }',
          '',
        ].join('\n'),
      );
      const loaded = await loadStick(join(dir, 'mpprov.yaml'));
      expect(where(loaded.problems).filter((p) => p.includes('needs its parent'))).toEqual([]);
    },
  );

  it.each(OBJECT_NAMES)("agent.yaml's devices entry %s is checked like any other", async (name) => {
    const dir = tempFolder('map-keys');
    const file = join(dir, 'agent.yaml');
    writeFileSync(file, `version: 1\ndevices:\n  ${name}:\n    username: ""\n`);
    const { problems } = await loadAgentConfig(file, {});
    const empty = `devices.${name}.username must not be empty`;
    if (name === '__proto__')
      expect(where(problems)).toEqual([
        `devices.__proto__ '__proto__' cannot name an entry here: JavaScript gives every object a key of that name`,
        empty,
      ]);
    // Every problem at once: the entry's name is judged as a device URL beside its schema problem.
    else expect(where(problems)).toEqual([`devices.${name} '${name}' is not a device URL`, empty]);
  });

  it('a valid agent.yaml devices entry named __proto__ is refused, not dropped', async () => {
    const dir = tempFolder('map-keys');
    const file = join(dir, 'agent.yaml');
    writeFileSync(file, `version: 1\ndevices:\n  __proto__:\n    username: admin\n`);
    const { problems } = await loadAgentConfig(file, {});
    expect(problems.map((p) => `${p.line}:${p.column} ${p.path}`)).toEqual(['3:3 devices.__proto__']);
  });
});
