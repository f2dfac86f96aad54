import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { readInventory } from '../../src/stick-build/read-inventory.js';
import { tempFolder } from '../support/temp-folder.js';

/** The inventory as a spreadsheet exports it (docs/rolling-out.md): real files, every problem located. */
const work = tempFolder('inventory');
let count = 0;

function file(content: string | Buffer, ext = 'csv'): string {
  const path = join(work, `inventory-${(count += 1)}.${ext}`);
  writeFileSync(path, content);
  return path;
}

const at = (problem: { file: string; line: number; column: number; message: string }) =>
  `${problem.file.slice(work.length + 1)}:${problem.line}:${problem.column} ${problem.message}`;

describe('a CSV inventory', () => {
  it('reads a BOM, CRLF, quoted commas and line breaks, empty rows, and keeps formulas as text', async () => {
    const csv = file(
      '\ufeffsite,name,url,notes,dns\r\n' +
        'berlin,mp-berlin-01,https://10.1.1.10,"rack 4, row ""B""",10.1.0.53\r\n' +
        ',,,,\r\n' +
        '\r\n' +
        'paris,mp-paris-01,https://10.2.1.10,"two\r\nlines",=cmd|\' /C calc\'!A0\r\n' +
        'paris,mp-paris-02,https://10.2.1.11,,@SUM(A1)\r\n',
    );
    const inventory = await readInventory(csv);
    expect(inventory.problems).toEqual([]);
    expect([...inventory.sites.keys()]).toEqual(['berlin', 'paris']);
    const [berlin] = inventory.sites.get('berlin') ?? [];
    expect(berlin?.vars.get('notes')?.value).toBe('rack 4, row "B"');
    const [first, second] = inventory.sites.get('paris') ?? [];
    expect(first?.place.line).toBe(5);
    expect(first?.vars.get('notes')?.value).toBe('two\nlines');
    expect(first?.vars.get('dns')).toEqual({ value: "=cmd|' /C calc'!A0", place: { file: csv, line: 6, column: 8 } });
    // The empty cell sets nothing; the row after a quoted line break counts its physical line.
    expect(second?.vars.has('notes')).toBe(false);
    expect(second?.place.line).toBe(7);
    expect(second?.vars.get('dns')?.value).toBe('@SUM(A1)');
  });

  it('refuses a file with a Latin-1 byte as a whole, naming the line', async () => {
    const csv = file(
      Buffer.concat([
        Buffer.from('site,name,url\nberlin,mp-1,https://a\nk'),
        Buffer.from([0xf6]),
        Buffer.from('ln,mp-2,https://b\n'),
      ]),
    );
    const inventory = await readInventory(csv);
    expect(inventory.refusedWhole).toBe(true);
    expect(inventory.sites.size).toBe(0);
    expect(inventory.problems.map(at)).toEqual([
      expect.stringMatching(
        /^inventory-\d+\.csv:3:1 the file is not UTF-8 text \(this line holds a byte that is not UTF-8/,
      ),
    ]);
  });

  it('names both places of a duplicate MP name, and refuses both sites', async () => {
    const csv = file(
      'site,name,url\nberlin,mp-1,https://a\nparis,mp-2,https://b\nrome,mp-1,https://c\noslo,mp-3,https://d\n',
    );
    const inventory = await readInventory(csv);
    expect(inventory.problems.map(at)).toEqual([
      `${csv.slice(work.length + 1)}:4:6 the monitoring point name 'mp-1' is used twice: here (site rome) and at ${csv}:2:1 (site berlin); neither site gets a stick`,
    ]);
    expect([...inventory.refusedSites].sort()).toEqual(['berlin', 'rome']);
  });

  it("gives one located problem per mistake, and refuses only those rows' sites", async () => {
    const csv = file(
      'site,name,url,vlan\n' +
        'good,mp-good,https://a,1\n' +
        'Bad Site,mp-x,https://b,2\n' + // a site name that is not allowed
        'short,mp-short,https://c\n' + // a field missing
        'nameless,,https://d,4\n' + // the name empty
        'nourl,mp-nourl,,5\n' + // the url empty
        'extra,mp-extra,https://e,6,7\n' + // a field too many
        'quote,"mp-q"x,https://f,8\n', // text after a closing quote
    );
    const inventory = await readInventory(csv);
    const name = csv.slice(work.length + 1);
    expect(inventory.problems.map(at)).toEqual([
      `${name}:3:1 the site name 'Bad Site' is not allowed`,
      `${name}:4:1 the row has 3 fields; the header has 4`,
      `${name}:5:10 the name is empty`,
      `${name}:6:16 the url is empty`,
      `${name}:7:28 the row has 5 fields; the header has 4`,
      `${name}:8:13 text follows the closing quote of a field`,
    ]);
    expect(inventory.refusedWhole).toBe(false);
    expect([...inventory.refusedSites].sort()).toEqual(['extra', 'nameless', 'nourl', 'quote', 'short']);
    expect(inventory.sites.get('good')?.map((mp) => mp.name)).toEqual(['mp-good']);
  });

  it('refuses a header without the required columns or with a bad column name, as a whole', async () => {
    const inventory = await readInventory(file('site,name,Url Address\nberlin,mp-1,https://a\n'));
    expect(inventory.refusedWhole).toBe(true);
    expect(inventory.problems.map((p) => `${p.line}:${p.column} ${p.message}`)).toEqual([
      "1:11 the column name 'Url Address' is not a variable name",
      "1:1 the header has no 'url' column",
    ]);
  });

  it('reads 10 000 rows, and a quoted field never closed ends with one problem', async () => {
    const rows = Array.from({ length: 10_000 }, (_, i) => `site-${i % 100},mp-${i},https://10.0.${i % 250}.${i % 200}`);
    const inventory = await readInventory(file(`site,name,url\n${rows.join('\n')}\n`));
    expect(inventory.problems).toEqual([]);
    expect([...inventory.sites.values()].reduce((n, mps) => n + mps.length, 0)).toBe(10_000);
    const open = await readInventory(file(`site,name,url\nberlin,"mp-1,https://a\n${'x,'.repeat(100_000)}\n`));
    expect(open.problems.map((p) => `${p.line}:${p.column} ${p.message}`)).toEqual([
      '2:8 this quoted field is never closed: the rest of the file would be its text',
    ]);
  });
});

describe('a YAML inventory', () => {
  it('looks variables up MP, site vars, defaults, each with its place', async () => {
    const yaml = file(
      'version: 1\ndefaults:\n  username: admin\n  vlan: 1\nsites:\n  berlin:\n    vars: { vlan: 120 }\n    monitoring_points:\n      - name: mp-berlin-01\n        url: https://10.1.1.10\n        path_targets: [192.0.2.80, app.example.com]\n',
      'yaml',
    );
    const inventory = await readInventory(yaml);
    expect(inventory.problems).toEqual([]);
    const [mp] = inventory.sites.get('berlin') ?? [];
    expect(mp?.vars.get('username')).toEqual({ value: 'admin', place: { file: yaml, line: 3, column: 13 } });
    expect(mp?.vars.get('vlan')).toEqual({ value: 120, place: { file: yaml, line: 7, column: 19 } });
    expect(mp?.vars.get('path_targets')?.value).toEqual(['192.0.2.80', 'app.example.com']);
    expect(mp?.vars.get('site')?.value).toBe('berlin');
  });

  it('locates each mistake at its node', async () => {
    const yaml = file(
      'version: 1\nsites:\n  berlin:\n    monitoring_points:\n      - url: https://a\n  paris:\n    monitoring_points:\n      - name: mp-p\n        url: https://b\n        Bad-Key: 1\n  Rome:\n    monitoring_points: []\n',
      'yaml',
    );
    const inventory = await readInventory(yaml);
    expect(inventory.problems.map((p) => `${p.line}:${p.column} ${p.message}`)).toEqual([
      '5:9 a monitoring point needs a name (text)',
      "10:9 'Bad-Key' is not a variable name",
      "11:3 the site name 'Rome' is not allowed",
    ]);
    expect([...inventory.refusedSites].sort()).toEqual(['berlin', 'paris']);
  });

  it('locates a YAML syntax error where it is, not at the top of the file', async () => {
    const yaml = file(
      'version: 1\nsites:\n  berlin:\n    monitoring_points:\n      - name: mp-1\n        name: mp-2\n        url: https://a\n',
      'yaml',
    );
    const inventory = await readInventory(yaml);
    expect(inventory.refusedWhole).toBe(true);
    expect(inventory.problems.map((p) => `${p.line}:${p.column} ${p.message}`)).toEqual([
      '6:9 not YAML: duplicate key',
    ]);
  });
});
