import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { loadAgentConfig, loadStick } from '../../src/config/index.js';
import { createSelfSignedCertificate } from '../../src/simulator/index.js';

/** The stick's `paths` (docs/stick-format.md) and agent.yaml's wait_measuring_s, org_id and events. */

const TOKEN = 'tok-Quokka-4471-never-shown';

function folder(files: Record<string, string>): string {
  const dir = mkdtempSync(join(tmpdir(), 'mpprov-service-paths-'));
  for (const [name, text] of Object.entries(files)) writeFileSync(join(dir, name), text);
  return dir;
}

function agentYaml(dir: string, extra: string): string {
  writeFileSync(
    join(dir, 'agent.yaml'),
    `service:\n  url: https://service.example/api\n  token_file: ${dir}/service.token\n${extra}`,
  );
  return join(dir, 'agent.yaml');
}

describe('agent.yaml service: waits, organization, events', () => {
  it('waits 600 s for paths by default and carries org_id', async () => {
    const dir = folder({ 'service.token': `${TOKEN}\n` });
    const plain = await loadAgentConfig(agentYaml(dir, ''));
    expect(plain.problems).toEqual([]);
    expect(plain.config.service?.waitMeasuringS).toBe(600);
    expect(plain.config.service?.orgId).toBeUndefined();
    const set = await loadAgentConfig(agentYaml(dir, '  wait_measuring_s: 45\n  org_id: 12\n'));
    expect(set.problems).toEqual([]);
    expect(set.config.service).toMatchObject({ waitMeasuringS: 45, orgId: 12 });
  });

  it('refuses an org_id that is not a positive whole number and a wait beyond an hour, located', async () => {
    const dir = folder({ 'service.token': `${TOKEN}\n` });
    const { config, problems } = await loadAgentConfig(agentYaml(dir, '  wait_measuring_s: 7200\n  org_id: -3\n'));
    expect(config.service).toBeUndefined();
    expect(problems.map((p) => [p.path, p.line, p.column, p.message, p.hint])).toEqual([
      ['service.wait_measuring_s', 4, 21, 'must be at most 3600', 'use 3600 or less'],
      ['service.org_id', 5, 11, 'must be more than 0', 'use a number above 0'],
    ]);
  });

  it('carries an events receiver on loopback without TLS, and one on the network with it', async () => {
    const pki = createSelfSignedCertificate({ commonName: 'events test' });
    const dir = folder({
      'service.token': `${TOKEN}\n`,
      'events.crt': pki.certificatePem,
      'events.key': pki.privateKeyPem,
    });
    const loopback = await loadAgentConfig(
      agentYaml(dir, '  events:\n    listen: "127.0.0.1:8472"\n    public_url: https://prov.example.net:8472/ev/\n'),
    );
    expect(loopback.problems).toEqual([]);
    expect(loopback.config.service?.events).toEqual({
      listen: { host: '127.0.0.1', port: 8472, text: '127.0.0.1:8472', loopback: true },
      publicUrl: 'https://prov.example.net:8472/ev/',
      tls: undefined,
      checkS: 60,
    });
    const network = await loadAgentConfig(
      agentYaml(
        dir,
        `  events:\n    listen: "[::]:8472"\n    public_url: https://prov.example.net:8472/ev/\n    tls: { cert: ${dir}/events.crt, key: ${dir}/events.key }\n    check_s: 30\n`,
      ),
    );
    expect(network.problems).toEqual([]);
    expect(network.config.service?.events).toMatchObject({
      listen: { host: '::', port: 8472, loopback: false },
      tls: { certFile: `${dir}/events.crt`, keyFile: `${dir}/events.key` },
      checkS: 30,
    });
    // The key file is named, never read into the settings.
    expect(JSON.stringify(network.config)).not.toContain('PRIVATE KEY');
  });

  it('takes an http public_url for a receiver that serves plain HTTP on loopback, and only for it', async () => {
    const pki = createSelfSignedCertificate({ commonName: 'events test' });
    const dir = folder({
      'service.token': `${TOKEN}\n`,
      'events.crt': pki.certificatePem,
      'events.key': pki.privateKeyPem,
    });
    const plain = await loadAgentConfig(
      agentYaml(dir, '  events:\n    listen: "127.0.0.1:8472"\n    public_url: http://127.0.0.1:8472/ev/\n'),
    );
    expect(plain.problems).toEqual([]);
    expect(plain.config.service?.events?.publicUrl).toBe('http://127.0.0.1:8472/ev/');
    // Plain HTTP to any other host would carry the receiver's secret path, its only lock, across the network.
    const away = await loadAgentConfig(
      agentYaml(dir, '  events:\n    listen: "127.0.0.1:8472"\n    public_url: http://prov.example.net:8472/ev/\n'),
    );
    expect(away.problems.map((p) => [p.path, p.line, p.message])).toEqual([
      ['service.events.public_url', 6, 'the service posts events over HTTPS only: public_url must start with https://'],
    ]);
    const local = await loadAgentConfig(
      agentYaml(dir, '  events:\n    listen: "[::1]:8472"\n    public_url: http://localhost:8472/ev/\n'),
    );
    expect(local.problems).toEqual([]);
    // With its own certificate the receiver answers HTTPS only: a service posting http:// would fail every event.
    const mixed = await loadAgentConfig(
      agentYaml(
        dir,
        `  events:\n    listen: "127.0.0.1:8472"\n    public_url: http://127.0.0.1:8472/ev/\n    tls: { cert: ${dir}/events.crt, key: ${dir}/events.key }\n`,
      ),
    );
    expect(mixed.problems.map((p) => [p.path, p.line, p.message])).toEqual([
      ['service.events.public_url', 6, 'the service posts events over HTTPS only: public_url must start with https://'],
    ]);
  });

  it('locates each events problem: clear text beyond loopback, http, a bad address, unreadable files', async () => {
    const dir = folder({ 'service.token': `${TOKEN}\n`, 'not-a-cert.pem': 'hello\n' });
    const clear = await loadAgentConfig(
      agentYaml(dir, '  events:\n    listen: "0.0.0.0:8472"\n    public_url: http://prov.example.net/ev/\n'),
    );
    expect(clear.config.service).toBeUndefined();
    expect(clear.problems.map((p) => [p.path, p.line, p.message, p.hint])).toEqual([
      [
        'service.events.listen',
        5,
        'the events receiver on 0.0.0.0:8472 would take events from the network in clear text',
        'add events.tls: { cert: /etc/mpprov/events.crt, key: /etc/mpprov/events.key }, or listen on 127.0.0.1',
      ],
      [
        'service.events.public_url',
        6,
        'the service posts events over HTTPS only: public_url must start with https://',
        'write it like https://prov.example.net:8472/mpprov-events/',
      ],
    ]);
    const files = await loadAgentConfig(
      agentYaml(
        dir,
        `  events:\n    listen: "prov.example.net:8472"\n    public_url: https://prov.example.net/ev/\n    tls: { cert: ${dir}/not-a-cert.pem, key: events.key }\n`,
      ),
    );
    expect(files.problems.map((p) => [p.path, p.line, p.message])).toEqual([
      ['service.events.listen', 5, "'prov.example.net' is not an IP address this laptop can listen on"],
      ['service.events.tls.cert', 7, `certificate file ${dir}/not-a-cert.pem holds no PEM certificate`],
      ['service.events.tls.key', 7, 'the key file must be an absolute path in agent.yaml'],
    ]);
    expect(JSON.stringify([clear, files])).not.toContain(TOKEN);
  });
});

describe('paths on the stick', () => {
  it('keeps targets and locations as written', async () => {
    const dir = folder({
      'mpprov.yaml': [
        'version: 1',
        'monitoring_points:',
        '  - name: mp1',
        '    url: https://192.0.2.10',
        '    paths:',
        '      - target: 192.0.2.80',
        '        location: Datacenter Frankfurt',
        '      - target: app.example.com',
        '      - target: "2001:db8::80"',
        `      - target: ${'a'.repeat(63)}.${'b'.repeat(63)}.${'c'.repeat(63)}.${'d'.repeat(61)}`,
        '',
      ].join('\n'),
    });
    const loaded = await loadStick(join(dir, 'mpprov.yaml'));
    expect(loaded.problems.filter((p) => p.severity === 'error')).toEqual([]);
    expect(loaded.model?.monitoring_points[0]?.paths).toEqual([
      { target: '192.0.2.80', location: 'Datacenter Frankfurt' },
      { target: 'app.example.com' },
      { target: '2001:db8::80' },
      { target: `${'a'.repeat(63)}.${'b'.repeat(63)}.${'c'.repeat(63)}.${'d'.repeat(61)}` },
    ]);
  });

  it('refuses a target of 254 characters and a label of 64, located at the target', async () => {
    const long = `${'a'.repeat(63)}.${'b'.repeat(63)}.${'c'.repeat(63)}.${'d'.repeat(62)}`;
    const dir = folder({
      'mpprov.yaml': `version: 1\nmonitoring_points:\n  - name: mp1\n    url: https://192.0.2.10\n    paths:\n      - target: ${long}\n      - target: ${'e'.repeat(64)}.example\n`,
    });
    const loaded = await loadStick(join(dir, 'mpprov.yaml'));
    expect(long.length).toBe(254);
    expect(loaded.problems.map((p) => [p.path, p.line, p.column, p.message])).toEqual([
      [
        'monitoring_points[0].paths[0].target',
        6,
        17,
        `'${long}' is not a host name (RFC 1123, at most 253 characters) or an IPv4/IPv6 address`,
      ],
      [
        'monitoring_points[0].paths[1].target',
        7,
        17,
        `'${'e'.repeat(64)}.example' is not a host name (RFC 1123, at most 253 characters) or an IPv4/IPv6 address`,
      ],
    ]);
  });
});
