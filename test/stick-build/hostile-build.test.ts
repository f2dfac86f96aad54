import { execFileSync } from 'node:child_process';
import { existsSync, readFileSync, symlinkSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { buildSticks } from '../../src/stick-build/index.js';
import { fixtureCopy, fixtureSecrets, modeOf } from './stick-build-rig.js';

/** The builder fed what a hostile or careless network team would give it: real files, real links and FIFOs. */
async function build(dir: string, out: string, inventory = 'fleet.yaml', template = 'template.yaml') {
  return buildSticks({
    inventory: join(dir, inventory),
    template: join(dir, template),
    out,
    secretsDir: join(dir, 'secrets'),
    image: false,
  });
}

/** The same, writing each site's FAT image as well (mcopy). */
async function buildImages(dir: string, out: string) {
  return buildSticks({
    inventory: join(dir, 'fleet.yaml'),
    template: join(dir, 'template.yaml'),
    out,
    secretsDir: join(dir, 'secrets'),
    image: true,
  });
}

/** The fixture inventory with every MP's CA file (the `ca` default) renamed. */
function withCa(dir: string, ca: string): void {
  const text = readFileSync(join(dir, 'fleet.yaml'), 'utf8');
  writeFileSync(join(dir, 'fleet.yaml'), text.replace('ca: certs/fleet-ca.pem', `ca: ${ca}`));
}

describe('stick build with hostile files named by the template', () => {
  it('refuses a link out of the template folder without copying what it names onto a stick', async () => {
    const { dir, out } = fixtureCopy('hostile-link');
    // A real CA file outside the folder: followed, it would pass validation and ride on the stick.
    const outside = join(dir, '..', `${dir.split('/').at(-1) ?? ''}-outside-ca.pem`);
    writeFileSync(outside, readFileSync(join(dir, 'certs/fleet-ca.pem')));
    symlinkSync(outside, join(dir, 'certs/linked-ca.pem'));
    withCa(dir, 'certs/linked-ca.pem');
    const target = out();
    const result = await build(dir, target);
    expect(result.ran).toBe(true);
    if (!result.ran) return;
    expect(result.sticks).toEqual([]);
    expect(result.problems.map((p) => [p.line, p.path, p.message])).toEqual([
      [
        4,
        'monitoring_points[0].interfaces.eth1.dot1x.ca_cert',
        `mp-berlin-01: the file 'certs/linked-ca.pem' is a link that leads outside the template's folder (in ${dir}) (template ${join(dir, 'template.yaml')}:21:16)`,
      ],
      [
        4,
        'monitoring_points[0].interfaces.eth1.dot1x.ca_cert',
        `mp-paris-01: the file 'certs/linked-ca.pem' is a link that leads outside the template's folder (in ${dir}) (template ${join(dir, 'template.yaml')}:21:16)`,
      ],
    ]);
    expect(existsSync(join(target, 'berlin'))).toBe(false);
    expect(existsSync(join(target, 'paris'))).toBe(false);
  });

  it('refuses a FIFO and a device without opening them (no hang, nothing copied)', async () => {
    const { dir, out } = fixtureCopy('hostile-fifo');
    execFileSync('mkfifo', [join(dir, 'certs/fifo.pem')]);
    symlinkSync('/dev/zero', join(dir, 'certs/zero.pem'));
    withCa(dir, 'certs/fifo.pem');
    // paris's MPs name the device instead, through their site's vars.
    const text = readFileSync(join(dir, 'fleet.yaml'), 'utf8');
    writeFileSync(
      join(dir, 'fleet.yaml'),
      text.replace('vars: { dns: [10.2.0.53, 10.2.0.54] }', 'vars: { dns: [10.2.0.53], ca: certs/zero.pem }'),
    );
    const result = await build(dir, out());
    expect(result.ran).toBe(true);
    if (!result.ran) return;
    expect(result.sticks).toEqual([]);
    const messages = result.problems.map((p) => p.message);
    expect(messages).toHaveLength(2);
    expect(messages[0]).toContain("the file 'certs/fifo.pem' is a FIFO (named pipe), not a regular file");
    expect(messages[1]).toContain("the file 'certs/zero.pem' is a link that leads outside the template's folder");
  });

  it('says a template key __proto__ is unknown instead of dropping it unsaid', async () => {
    const { dir, out } = fixtureCopy('hostile-proto');
    writeFileSync(
      join(dir, 'template.yaml'),
      `${readFileSync(join(dir, 'template.yaml'), 'utf8')}__proto__:\n  x: 1\n`,
    );
    const result = await build(dir, out());
    expect(result.ran).toBe(true);
    if (!result.ran) return;
    expect(result.sticks).toEqual([]);
    expect(result.problems).toHaveLength(3);
    for (const problem of result.problems) {
      expect(problem.path).toMatch(/^monitoring_points\[\d\]\.__proto__$/);
      expect(problem.message).toContain("unknown key '__proto__'");
    }
  });
});

describe('stick build with a hostile template file', () => {
  it('refuses a FIFO or /dev/zero as the template without reading it', async () => {
    const { dir, out } = fixtureCopy('hostile-template');
    execFileSync('mkfifo', [join(dir, 'fifo.yaml')]);
    symlinkSync('/dev/zero', join(dir, 'zero.yaml'));
    for (const template of ['fifo.yaml', 'zero.yaml']) {
      const result = await build(dir, out(), 'fleet.yaml', template);
      expect(result).toMatchObject({
        ran: false,
        problems: [{ file: join(dir, template), line: 1, column: 1, message: 'the template is not a file' }],
      });
    }
  });
});

describe('stick build with names FAT cannot tell apart', () => {
  it('refuses two files of one site that differ only in case, and builds the other sites', async () => {
    const { dir, out } = fixtureCopy('case-only');
    // Two MPs of paris name their CA in different case: on FAT (case-insensitive) one file, and one
    // MP's CA would silently be the other's, or mcopy stops half way through the image.
    writeFileSync(join(dir, 'certs/Fleet-CA.pem'), readFileSync(join(dir, 'certs/fleet-ca.pem')));
    const text = readFileSync(join(dir, 'fleet.yaml'), 'utf8');
    writeFileSync(
      join(dir, 'fleet.yaml'),
      text.replace('dot1x_identity: mp-paris-02', 'dot1x_identity: mp-paris-02\n        ca: certs/Fleet-CA.pem'),
    );
    const target = out();
    const result = await buildImages(dir, target);
    expect(result.ran).toBe(true);
    if (!result.ran) return;
    expect(result.problems.map((p) => [p.path, p.message, p.hint])).toEqual([
      [
        'monitoring_points[1].interfaces.eth1.dot1x.ca_cert',
        `mp-paris-02: the files 'certs/fleet-ca.pem' and 'certs/Fleet-CA.pem' differ only in case: on the stick's FAT filesystem they are one file (template ${join(dir, 'template.yaml')}:21:16)`,
        'name the files apart by more than upper and lower case',
      ],
    ]);
    expect(result.sticks.map((s) => [s.site, s.image])).toEqual([['berlin', 'berlin.img']]);
    expect(existsSync(join(target, 'paris'))).toBe(false);
  });
});

describe('stick build with careless secret files', () => {
  it('refuses a secret of two lines or with a control character, naming it, never its value', async () => {
    const { dir, out } = fixtureCopy('careless-secret');
    // A password pasted with what followed it, and one with an escape sequence: either would reach
    // the MP inside its 802.1X password and fail on site.
    writeFileSync(join(dir, 'secrets/dot1x-mp-berlin-01'), 'Berlin-Dot1x-Pw\nsecond-line-of-the-paste\n');
    writeFileSync(join(dir, 'secrets/dot1x-mp-paris-02'), 'Paris-Dot1x-\u001b[31mPw\n');
    const result = await build(dir, out());
    expect(result.ran).toBe(true);
    if (!result.ran) return;
    expect(result.sticks).toEqual([]);
    const template = join(dir, 'template.yaml');
    expect(result.problems.map((p) => [p.line, p.path, p.message, p.hint])).toEqual([
      [
        10,
        'monitoring_points[0].interfaces.eth1.dot1x.password_file',
        `mp-berlin-01: the secret 'dot1x-mp-berlin-01' holds more than one line or a control character (template ${template}:20:22)`,
        `write the secret alone, on one line, to ${join(dir, 'secrets/dot1x-mp-berlin-01')}`,
      ],
      [
        21,
        'monitoring_points[1].interfaces.eth1.dot1x.password_file',
        `mp-paris-02: the secret 'dot1x-mp-paris-02' holds more than one line or a control character (template ${template}:20:22)`,
        `write the secret alone, on one line, to ${join(dir, 'secrets/dot1x-mp-paris-02')}`,
      ],
    ]);
    const printed = JSON.stringify(result);
    for (const piece of ['Berlin-Dot1x-Pw', 'second-line-of-the-paste', 'Paris-Dot1x-'])
      expect(printed).not.toContain(piece);
  });
  it('refuses a secret that is not UTF-8 instead of writing U+FFFD for its letters, and drops a BOM', async () => {
    const { dir, out } = fixtureCopy('latin1-secret');
    // An old editor's Latin-1: 'Grün' with one byte for the 'ü'.
    writeFileSync(join(dir, 'secrets/dot1x-mp-berlin-01'), Buffer.from('Gr\u00fcn-Dot1x-Pw\n', 'latin1'));
    // Notepad's UTF-8, with the byte order mark first.
    writeFileSync(join(dir, 'secrets/dot1x-mp-paris-02'), '\ufeffParis-Gr\u00fcn-Pw\n');
    const target = out();
    const result = await build(dir, target);
    expect(result.ran).toBe(true);
    if (!result.ran) return;
    expect(result.problems.map((p) => [p.path, p.message, p.hint])).toEqual([
      [
        'monitoring_points[0].interfaces.eth1.dot1x.password_file',
        `mp-berlin-01: the secret 'dot1x-mp-berlin-01' is not UTF-8 text (a byte such as Latin-1's) (template ${join(dir, 'template.yaml')}:20:22)`,
        `save ${join(dir, 'secrets/dot1x-mp-berlin-01')} as UTF-8`,
      ],
    ]);
    expect(result.sticks.map((s) => s.site)).toEqual(['paris']);
    expect(readFileSync(join(target, 'paris/secrets/dot1x-mp-paris-02'), 'utf8')).toBe('Paris-Gr\u00fcn-Pw');
    expect(JSON.stringify(result)).not.toContain('Dot1x-Pw');
  });
});

describe('stick build output on a shared machine', () => {
  it('leaves no secret readable by other users: the images and every copied file are owner-only', async () => {
    const { dir, out } = fixtureCopy('owner-only');
    // World-readable beside the template; a private key or a PFX is copied the same way as this CA.
    writeFileSync(join(dir, 'certs/fleet-ca.pem'), readFileSync(join(dir, 'certs/fleet-ca.pem')), { mode: 0o644 });
    const target = out();
    const result = await buildImages(dir, target);
    expect(result.ran && result.sticks.map((s) => s.image)).toEqual(['berlin.img', 'paris.img']);
    expect(modeOf(join(target, 'berlin.img'))).toBe(0o600);
    expect(modeOf(join(target, 'paris.img'))).toBe(0o600);
    expect(modeOf(join(target, 'paris/certs/fleet-ca.pem'))).toBe(0o600);
    expect(modeOf(join(target, 'paris/secrets/admin-paris'))).toBe(0o600);
  });
});

describe('stick build with a hostile inventory', () => {
  it('says where aliases expand a billion times, and builds the other site', async () => {
    const { dir, out } = fixtureCopy('hostile-laughs');
    const laughs = [
      '    vars:',
      '      dns: [10.1.0.53]',
      '      gateway: 10.1.2.1',
      '      a: &a [x, x, x, x, x, x, x, x, x, x]',
      ...['b', 'c', 'd', 'e', 'f', 'g', 'h'].map(
        (name, i) =>
          `      ${name}: &${name} [${Array(10)
            .fill(`*${'abcdefg'[i] ?? ''}`)
            .join(', ')}]`,
      ),
    ].join('\n');
    const text = readFileSync(join(dir, 'fleet.yaml'), 'utf8');
    writeFileSync(join(dir, 'fleet.yaml'), text.replace('    vars: { dns: [10.1.0.53], gateway: 10.1.2.1 }', laughs));
    const result = await build(dir, out());
    expect(result.ran).toBe(true);
    if (!result.ran) return;
    expect(result.sticks.map((s) => s.site)).toEqual(['paris']);
    expect(result.problems.map((p) => [p.line, p.message])).toEqual([
      [13, "'c' expands YAML aliases (*name) too many times"],
      [14, "'d' expands YAML aliases (*name) too many times"],
      [15, "'e' expands YAML aliases (*name) too many times"],
      [16, "'f' expands YAML aliases (*name) too many times"],
      [17, "'g' expands YAML aliases (*name) too many times"],
      [18, "'h' expands YAML aliases (*name) too many times"],
    ]);
    const printed = JSON.stringify(result);
    for (const secret of fixtureSecrets(join(dir, 'secrets'))) expect(printed).not.toContain(secret);
  });
});
