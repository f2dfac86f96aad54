import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import type { InventoryMp } from '../../src/stick-build/inventory.js';
import { checkTemplate } from '../../src/stick-build/check-template.js';
import { loadTemplate } from '../../src/stick-build/load-template.js';
import { renderMp } from '../../src/stick-build/render-template.js';
import { tempFolder } from '../support/temp-folder.js';

/** Substitution on the parsed template (docs/rolling-out.md, "The template"), from real template files. */
const work = tempFolder('render');
let count = 0;

async function render(template: string, vars: Record<string, unknown>, secrets: string[] = []) {
  const file = join(work, `template-${(count += 1)}.yaml`);
  writeFileSync(file, template);
  const loaded = await loadTemplate(file);
  if (!loaded.ok) throw new Error(JSON.stringify(loaded.problems));
  const place = { file: 'inventory.yaml', line: 7, column: 9 };
  const mp: InventoryMp = {
    site: 'berlin',
    name: 'mp-1',
    place,
    vars: new Map(Object.entries({ site: 'berlin', name: 'mp-1', ...vars }).map(([k, value]) => [k, { value, place }])),
  };
  return renderMp(loaded.template, mp, 0, (name) =>
    secrets.includes(name) ? { ok: true } : { ok: false, message: `the secret '${name}' is missing` },
  );
}

describe('renderMp', () => {
  it("keeps a whole value's type, reads defaults as YAML, leaves a null key out, and makes paths targets", async () => {
    const rendered = await render(
      'name: ${name}\nurl: https://${host}:${port}\nvlan: ${vlan}\nmtu: ${mtu:-1500}\ngateway: ${gateway:-~}\ndns: ${dns}\npaths: ${path_targets}\nnote: "${name} at ${site}"\n',
      { host: '10.1.1.10', port: 8443, vlan: 120, dns: ['10.1.0.53'], path_targets: ['192.0.2.80', 'app.example.com'] },
    );
    expect(rendered.problems).toEqual([]);
    expect(rendered.value).toEqual({
      name: 'mp-1',
      url: 'https://10.1.1.10:8443',
      vlan: 120,
      mtu: 1500,
      dns: ['10.1.0.53'],
      paths: [{ target: '192.0.2.80' }, { target: 'app.example.com' }],
      note: 'mp-1 at berlin',
    });
    expect(rendered.origins.get('vlan')).toEqual({ line: 3, column: 7, variable: expect.anything() as unknown });
  });

  it('takes ${secret:NAME} only as a *_file value, with ${var} in NAME, and reports an unset variable', async () => {
    const rendered = await render(
      'name: ${name}\npassword_file: ${secret:admin-${site}}\nusername: ${username}\nidentity: "x${secret:dot1x}"\n',
      {},
      ['admin-berlin'],
    );
    expect(rendered.value).toEqual({ name: 'mp-1', password_file: 'secrets/admin-berlin' });
    expect([...rendered.secrets]).toEqual(['admin-berlin']);
    expect(rendered.problems.map((p) => `${p.line}:${p.column} ${p.path} ${p.message}`)).toEqual([
      expect.stringContaining(
        '7:9 monitoring_points[0].username mp-1: ${username} is not set for this monitoring point (template',
      ),
      expect.stringContaining(
        '7:9 monitoring_points[0].identity mp-1: ${secret:...} may stand only as the whole value of a *_file key',
      ),
    ]);
  });

  it('renders a mapping key from a variable (the interface a site uses), never into a secret or a second key', async () => {
    const good = await render(
      'name: ${name}\ninterfaces:\n  ${uplink}:\n    ipv4: { method: dhcp }\n  eth${n}.120: {}\n',
      {
        uplink: 'eth2',
        n: 2,
      },
    );
    expect(good.problems).toEqual([]);
    expect(good.value).toEqual({ name: 'mp-1', interfaces: { eth2: { ipv4: { method: 'dhcp' } }, 'eth2.120': {} } });
    const bad = await render(
      'name: ${name}\n${k}: x\n${secret:admin}: y\nblock:\n  a: 1\n  ${same}: 2\n${unset}: z\n${empty:-}: w\n',
      { k: 'password', same: 'a' },
      ['admin'],
    );
    expect(bad.value).toEqual({ name: 'mp-1', block: { a: 1 } });
    expect(bad.problems.map((p) => `${p.path} ${p.message.replace(/ \(template .*$/, '')}`)).toEqual([
      "monitoring_points[0].${k} mp-1: the key ${k} becomes 'password', a secret: a template names its file, never its value",
      'monitoring_points[0].${secret:admin} mp-1: ${secret:...} may stand only as the whole value of a *_file key',
      "monitoring_points[0].block.${same} mp-1: the key ${same} becomes 'a', which this mapping already has",
      'monitoring_points[0].${unset} mp-1: ${unset} is not set for this monitoring point',
      'monitoring_points[0].${empty:-} mp-1: the key ${empty:-} is empty for this monitoring point',
    ]);
  });

  it('says a template mistake once, at its line, before any monitoring point is rendered', async () => {
    const file = join(work, 'broken.yaml');
    writeFileSync(
      file,
      'name: ${name}\nurl: ${url\nusername: "${secret:x}"\nvlan: ${Vlan}\npassword_file: ${secret:a-${site}}\n',
    );
    const loaded = await loadTemplate(file);
    if (!loaded.ok) throw new Error(JSON.stringify(loaded.problems));
    expect(checkTemplate(loaded.template).map((p) => `${p.line}:${p.column} ${p.message}`)).toEqual([
      '2:6 a ${ is never closed with }',
      '3:11 ${secret:...} may stand only as the whole value of a *_file key',
      "4:7 'Vlan' is not a variable name (lower-case letters, digits and _)",
    ]);
  });

  it('locates a template that is not YAML at the line of the mistake', async () => {
    const file = join(work, 'flow.yaml');
    writeFileSync(file, 'name: ${name}\nurl: ${url}\ntls: { fingerprint_sha256: ${fp} }\n');
    const loaded = await loadTemplate(file);
    expect(loaded.ok).toBe(false);
    const problems = loaded.ok ? [] : loaded.problems;
    expect(problems.map((p) => `${p.line}:${p.column} ${p.message}`)).toEqual([
      '3:29 not YAML: unexpected token',
      '3:30 not YAML: unexpected token',
      '3:34 not YAML: unexpected token',
    ]);
  });

  it('refuses a secret key given by value, from the inventory or written in the template, never saying the value', async () => {
    const file = join(work, 'inline-secret.yaml');
    writeFileSync(
      file,
      [
        'name: ${name}',
        'password: ${admin_password}',
        'interfaces:',
        '  wlan0:',
        '    wireless: { ssid: branch, security: wpa2-personal, passphrase: Literal-Psk-4711 }',
        '  eth1:',
        '    dot1x:',
        '      private_key_password:',
        '      password_file: ${secret:dot1x-${name}}',
        '',
      ].join('\n'),
    );
    const loaded = await loadTemplate(file);
    if (!loaded.ok) throw new Error(JSON.stringify(loaded.problems));
    const problems = checkTemplate(loaded.template);
    expect(problems.map((p) => `${p.line}:${p.column} ${p.message} (${p.hint})`)).toEqual([
      "2:1 'password' is a secret: a template names its file, never its value (write password_file: ${secret:NAME} and put the secret in --secrets-dir/NAME)",
      "5:56 'passphrase' is a secret: a template names its file, never its value (write passphrase_file: ${secret:NAME} and put the secret in --secrets-dir/NAME)",
      "8:7 'private_key_password' is a secret: a template names its file, never its value (write private_key_password_file: ${secret:NAME} and put the secret in --secrets-dir/NAME)",
    ]);
    expect(JSON.stringify(problems)).not.toContain('Literal-Psk-4711');
  });
});
