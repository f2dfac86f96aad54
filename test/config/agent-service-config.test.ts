import { execFileSync } from 'node:child_process';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { agentSecrets, loadAgentConfig, loadStick } from '../../src/config/index.js';
import { createSelfSignedCertificate } from '../../src/simulator/index.js';

/** agent.yaml's `service` block (docs/agent-config.md) and the stick's `service_hostname` (docs/stick-format.md). */

const TOKEN = 'tok-Numbat-6620-never-shown';

function folder(files: Record<string, string>): string {
  const dir = mkdtempSync(join(tmpdir(), 'mpprov-agent-service-'));
  for (const [name, text] of Object.entries(files)) writeFileSync(join(dir, name), text);
  return dir;
}

describe('agent.yaml service block', () => {
  it('refuses a token file that is a FIFO, a device, more than one line or not UTF-8, without hanging or quoting it', async () => {
    const dir = folder({ 'two-lines.token': `${TOKEN}\nsecond line\n`, 'ctrl.token': `${TOKEN}\u0007\n` });
    execFileSync('mkfifo', [join(dir, 'fifo.token')]);
    // Latin-1: read loosely its '\u00e9' would be U+FFFD, a token the service never issued.
    writeFileSync(join(dir, 'latin1.token'), Buffer.from(`${TOKEN}-\u00e9\n`, 'latin1'));
    const cases = {
      fifo: join(dir, 'fifo.token'),
      device: '/dev/zero',
      twoLines: join(dir, 'two-lines.token'),
      control: join(dir, 'ctrl.token'),
      latin1: join(dir, 'latin1.token'),
    };
    const messages: Record<string, string[]> = {};
    for (const [name, file] of Object.entries(cases)) {
      writeFileSync(join(dir, `${name}.yaml`), `service:\n  url: https://service.example/api\n  token_file: ${file}\n`);
      const { config, problems } = await loadAgentConfig(join(dir, `${name}.yaml`));
      expect(config.service).toBeUndefined();
      messages[name] = problems.map((p) => p.message);
    }
    expect(messages).toEqual({
      fifo: [`secret file ${cases.fifo} is not a regular file`],
      device: [`secret file /dev/zero is not a regular file`],
      twoLines: [
        `secret file ${cases.twoLines} holds more than one line or a control character: it must hold the secret alone, on one line`,
      ],
      control: [
        `secret file ${cases.control} holds more than one line or a control character: it must hold the secret alone, on one line`,
      ],
      latin1: [`secret file ${cases.latin1} is not UTF-8 text (a byte such as Latin-1's): save it as UTF-8`],
    });
    expect(JSON.stringify(messages)).not.toContain(TOKEN);
  });

  it('refuses a FIFO or a device named as the service CA or the events certificate, without hanging', async () => {
    const dir = folder({ 'service.token': `${TOKEN}\n` });
    execFileSync('mkfifo', [join(dir, 'ca.fifo')]);
    const agentYaml = (tls: string, events: string): string => {
      const file = join(dir, `agent-${tls.length}-${events.length}.yaml`);
      writeFileSync(
        file,
        `service:\n  url: https://service.example/api\n  token_file: ${dir}/service.token\n${tls}${events}`,
      );
      return file;
    };
    const events = (cert: string): string =>
      `  events:\n    listen: "127.0.0.1:8472"\n    public_url: https://127.0.0.1:8472/ev/\n    tls: { cert: ${cert}, key: /etc/hostname }\n`;
    const fifo = await loadAgentConfig(agentYaml(`  tls: { ca: ${dir}/ca.fifo }\n`, events(`${dir}/ca.fifo`)));
    expect(fifo.problems.map((p) => [p.path, p.message])).toEqual([
      ['service.tls.ca', `CA file ${dir}/ca.fifo cannot be read (not a file)`],
      ['service.events.tls.cert', `certificate file ${dir}/ca.fifo cannot be read (not a file)`],
    ]);
    const device = await loadAgentConfig(agentYaml('  tls: { ca: /dev/zero }\n', events('/dev/zero')));
    expect(device.problems.map((p) => [p.path, p.message])).toEqual([
      ['service.tls.ca', 'CA file /dev/zero cannot be read (not a file)'],
      ['service.events.tls.cert', 'certificate file /dev/zero cannot be read (not a file)'],
    ]);
  }, 10_000);

  it('reads the token file as a Secret without its one trailing newline, the CA, and the wait', async () => {
    const ca = createSelfSignedCertificate({ commonName: 'service test' }).certificatePem;
    const dir = folder({ 'service.token': `${TOKEN}\n`, 'ca.pem': ca });
    writeFileSync(
      join(dir, 'agent.yaml'),
      `service:\n  url: https://service.example/api/\n  token_file: ${dir}/service.token\n  tls: { ca: ${dir}/ca.pem }\n  wait_connected_s: 90\n`,
    );
    const { config, problems } = await loadAgentConfig(join(dir, 'agent.yaml'));
    expect(problems).toEqual([]);
    expect(config.service).toMatchObject({ url: 'https://service.example/api', caPem: ca, waitConnectedS: 90 });
    expect(config.service?.token.reveal()).toBe(TOKEN);
    // The one redactor learns it from agentSecrets, like every other secret of agent.yaml.
    expect(agentSecrets(config).map((s) => s.reveal())).toContain(TOKEN);
    expect(JSON.stringify(config)).not.toContain(TOKEN);
  });

  it('takes token_credential from $CREDENTIALS_DIRECTORY, and waits 300 s by default', async () => {
    const dir = folder({ 'service-token': `${TOKEN}\n` });
    writeFileSync(
      join(dir, 'agent.yaml'),
      'service:\n  url: https://service.example/api\n  token_credential: service-token\n',
    );
    const { config, problems } = await loadAgentConfig(join(dir, 'agent.yaml'), { CREDENTIALS_DIRECTORY: dir });
    expect(problems).toEqual([]);
    expect(config.service?.waitConnectedS).toBe(300);
    expect(config.service?.token.reveal()).toBe(TOKEN);
  });

  it('reports every problem of the block, placed, and keeps no half service', async () => {
    const dir = folder({});
    writeFileSync(
      join(dir, 'agent.yaml'),
      `service:\n  url: http://service.example/api\n  token_file: ${dir}/missing.token\n  tls: { ca: relative.pem }\n`,
    );
    const { config, problems } = await loadAgentConfig(join(dir, 'agent.yaml'));
    expect(config.service).toBeUndefined();
    expect(problems.map((p) => [p.path, p.line, p.message])).toEqual([
      ['service.url', 2, 'the service URL must start with https://'],
      ['service.token_file', 3, `secret file ${dir}/missing.token cannot be read (ENOENT)`],
      ['service.tls.ca', 4, 'the CA file must be an absolute path in agent.yaml'],
    ]);
  });

  it('needs exactly one token source', async () => {
    const none = folder({ 'agent.yaml': 'service:\n  url: https://service.example/api\n' });
    const noToken = await loadAgentConfig(join(none, 'agent.yaml'));
    expect(noToken.problems.map((p) => p.message)).toEqual([
      'the service block needs a token: token_file or token_credential',
    ]);
    const both = folder({ t: 'x\n' });
    writeFileSync(
      join(both, 'agent.yaml'),
      `service:\n  url: https://service.example/api\n  token_file: ${both}/t\n  token_credential: t\n`,
    );
    const twice = await loadAgentConfig(join(both, 'agent.yaml'), { CREDENTIALS_DIRECTORY: both });
    expect(twice.problems.map((p) => p.message)).toEqual([
      'the token is given twice, as token_file and as token_credential',
    ]);
  });
});

describe('service_hostname on the stick', () => {
  it('is optional and kept as written', async () => {
    const dir = folder({
      'mpprov.yaml':
        'version: 1\nmonitoring_points:\n  - name: mp1\n    service_hostname: branch-12-mp1.example\n    url: https://192.0.2.10\n  - name: mp2\n    url: https://192.0.2.11\n',
    });
    const loaded = await loadStick(join(dir, 'mpprov.yaml'));
    expect(loaded.problems.filter((p) => p.severity === 'error')).toEqual([]);
    expect(loaded.model?.monitoring_points.map((mp) => mp.service_hostname)).toEqual([
      'branch-12-mp1.example',
      undefined,
    ]);
  });
});
