import { execFileSync } from 'node:child_process';
import { X509Certificate } from 'node:crypto';
import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { agentConfigPath, loadAgentConfig, loadStick, resolveDeviceAccess } from '../../src/config/index.js';

function folder(files: Record<string, string>): string {
  const dir = mkdtempSync(join(tmpdir(), 'mpprov-agent-'));
  for (const [name, text] of Object.entries(files)) writeFileSync(join(dir, name), text);
  return dir;
}

const PIN = '5E:1F:00:11:22:33:44:55:66:77:88:99:AA:BB:CC:DD:EE:FF:00:11:22:33:44:55:66:77:88:99:AA:BB:CC:DD';

describe('agent.yaml', () => {
  it('is optional: a missing file means every default', async () => {
    const { config, problems } = await loadAgentConfig('/nonexistent/agent.yaml');
    expect(problems).toEqual([]);
    expect(config).toMatchObject({
      mediaRoots: ['/media', '/run/media', '/mnt'],
      stateDir: '/var/lib/mpprov',
      concurrency: 8,
      requestTimeoutMs: 30_000,
      restartTimeoutMs: 120_000,
    });
  });

  it('gives an 802.1X port 20 s to authorize after a restart, unless timeouts.dot1x_s says otherwise', async () => {
    expect((await loadAgentConfig('/nonexistent/agent.yaml')).config.dot1xGraceMs).toBe(20_000);
    const dir = folder({ 'agent.yaml': 'timeouts: { dot1x_s: 45 }\n', 'bad.yaml': 'timeouts: { dot1x_s: 0 }\n' });
    expect((await loadAgentConfig(join(dir, 'agent.yaml'))).config.dot1xGraceMs).toBe(45_000);
    const bad = await loadAgentConfig(join(dir, 'bad.yaml'));
    expect(bad.problems.map((p) => `${p.line}:${p.column} ${p.path} ${p.message}`)).toEqual([
      '1:22 timeouts.dot1x_s must be more than 0',
    ]);
  });

  it('when_done.eject: true unless agent.yaml says false, and a wrong type is a located problem', async () => {
    expect((await loadAgentConfig('/nonexistent/agent.yaml')).config.whenDone).toEqual({ eject: true });
    const off = folder({ 'agent.yaml': 'version: 1\nwhen_done: { eject: false }\n' });
    expect((await loadAgentConfig(join(off, 'agent.yaml'))).config.whenDone).toEqual({ eject: false });
    const bad = folder({ 'agent.yaml': 'version: 1\nwhen_done:\n  eject: yes please\n' });
    const { problems } = await loadAgentConfig(join(bad, 'agent.yaml'));
    expect(problems.map((p) => `${p.line}:${p.column} ${p.path}`)).toEqual(['3:10 when_done.eject']);
  });

  it('signatures: not required by default; allowed_signers kept as a path (relative to agent.yaml), not read at load', async () => {
    expect((await loadAgentConfig('/nonexistent/agent.yaml')).config.signatures).toEqual({
      required: false,
      allowedSigners: undefined,
    });
    const dir = folder({
      'agent.yaml': 'version: 1\nsignatures: { required: true, allowed_signers: keys/allowed_signers }\n',
    });
    const loaded = await loadAgentConfig(join(dir, 'agent.yaml'));
    expect(loaded.problems).toEqual([]);
    expect(loaded.config.signatures).toEqual({ required: true, allowedSigners: join(dir, 'keys/allowed_signers') });
  });

  it('signatures: located problems for a wrong type, an unknown key, and required without allowed_signers', async () => {
    const dir = folder({
      'type.yaml': 'version: 1\nsignatures:\n  required: yes please\n',
      'key.yaml': 'version: 1\nsignatures:\n  allowed_signer: /etc/mpprov/allowed_signers\n',
      'whose.yaml': 'version: 1\nsignatures:\n  required: true\n',
    });
    const at = async (name: string): Promise<string[]> =>
      (await loadAgentConfig(join(dir, name))).problems.map((p) => `${p.line}:${p.column} ${p.path}`);
    expect(await at('type.yaml')).toEqual(['3:13 signatures.required']);
    expect(await at('key.yaml')).toEqual(['3:3 signatures.allowed_signer']);
    const whose = await loadAgentConfig(join(dir, 'whose.yaml'));
    expect(whose.problems.map((p) => `${p.line}:${p.column} ${p.path} ${p.message}`)).toEqual([
      '3:13 signatures.required signatures are required but no allowed_signers file says whose',
    ]);
  });

  it('takes its path from the flag, then MPPROV_AGENT_CONFIG, then /etc/mpprov/agent.yaml', () => {
    expect(agentConfigPath('/a.yaml', { MPPROV_AGENT_CONFIG: '/b.yaml' })).toBe('/a.yaml');
    expect(agentConfigPath(undefined, { MPPROV_AGENT_CONFIG: '/b.yaml' })).toBe('/b.yaml');
    expect(agentConfigPath(undefined, {})).toBe('/etc/mpprov/agent.yaml');
  });

  it('takes an empty MPPROV_AGENT_CONFIG as unset, never as a missing file that means every default', () => {
    // `MPPROV_AGENT_CONFIG=$UNSET mpprov apply` would otherwise drop the laptop's signatures and trust unsaid.
    expect(agentConfigPath(undefined, { MPPROV_AGENT_CONFIG: '' })).toBe('/etc/mpprov/agent.yaml');
    // `--agent-config "$CFG"` with CFG unset is the same mistake, and the same file meant.
    expect(agentConfigPath('', { MPPROV_AGENT_CONFIG: '/srv/agent.yaml' })).toBe('/srv/agent.yaml');
    expect(agentConfigPath('', {})).toBe('/etc/mpprov/agent.yaml');
  });

  it('reports problems with the same located messages as a stick', async () => {
    const dir = folder({ 'agent.yaml': 'version: 1\nlog_levle: debug\ntimeouts: { restart_s: -1 }\n' });
    const { problems } = await loadAgentConfig(join(dir, 'agent.yaml'));
    expect(problems.map((p) => `${p.line}:${p.column} ${p.path} ${p.message} (${p.hint ?? ''})`)).toEqual([
      "2:1 log_levle unknown key 'log_levle' (did you mean 'log_level'?)",
      '3:24 timeouts.restart_s must be more than 0 (use a number above 0)',
    ]);
  });

  it('reads a password from $CREDENTIALS_DIRECTORY (systemd LoadCredential)', async () => {
    const creds = folder({ 'mp1-admin': 'cred-SeCrEt-1\n' });
    const dir = folder({
      'agent.yaml': `devices:\n  "https://192.0.2.10":\n    password_credential: mp1-admin\n    tls: { fingerprint_sha256: "${PIN}" }\n`,
    });
    const { config, problems } = await loadAgentConfig(join(dir, 'agent.yaml'), { CREDENTIALS_DIRECTORY: creds });
    expect(problems).toEqual([]);
    expect(config.devices.get('https://192.0.2.10')?.password?.reveal()).toBe('cred-SeCrEt-1');
  });

  it('says what is missing when a credential is asked for outside systemd', async () => {
    const dir = folder({ 'agent.yaml': 'defaults:\n  password_credential: admin-pw\n' });
    const { problems } = await loadAgentConfig(join(dir, 'agent.yaml'), {});
    expect(problems.map((p) => `${p.line}:${p.column} ${p.path} ${p.message}`)).toEqual([
      "2:24 defaults.password_credential credential 'admin-pw' needs $CREDENTIALS_DIRECTORY, which is not set",
    ]);
  });

  it('reads agent.yaml as a regular file only: a FIFO or /dev/zero named there is a problem, never a hang', async () => {
    const dir = folder({});
    const fifo = join(dir, 'agent.yaml');
    execFileSync('mkfifo', [fifo]);
    for (const file of [fifo, '/dev/zero']) {
      const { problems } = await loadAgentConfig(file, {});
      expect(problems.map((p) => p.message)).toEqual(['the agent configuration cannot be read (not a regular file)']);
    }
  });

  it('refuses a relative password_file, which the agent (started from /) would look for anywhere', async () => {
    const dir = folder({ 'agent.yaml': 'defaults:\n  password_file: admin.pw\n', 'admin.pw': 'rel-SeCrEt-1\n' });
    const { config, problems } = await loadAgentConfig(join(dir, 'agent.yaml'), {});
    expect(problems.map((p) => `${p.line}:${p.column} ${p.path} ${p.message}`)).toEqual([
      '2:18 defaults.password_file the password file must be an absolute path in agent.yaml',
    ]);
    expect(config.defaults.password).toBeUndefined();
  });

  it('a devices entry under a key that is no device URL still has its own problems said', async () => {
    const dir = folder({
      'agent.yaml':
        'devices:\n  "http://192.0.2.10":\n    password_credential: mp1/admin\n    tls: { fingerprint_sha256: "5E:1F" }\n',
    });
    const { config, problems } = await loadAgentConfig(join(dir, 'agent.yaml'), { CREDENTIALS_DIRECTORY: folder({}) });
    expect(problems.map((p) => `${p.line}:${p.column} ${p.path} ${p.message}`)).toEqual([
      "2:3 devices.http://192.0.2.10 'http://192.0.2.10' is not a device URL",
      '3:26 devices.http://192.0.2.10.password_credential a credential is a file name, not a path',
      '4:32 devices.http://192.0.2.10.tls.fingerprint_sha256 a SHA-256 fingerprint is 32 bytes in hex (64 hex digits, colons optional)',
    ]);
    expect(config.devices.size).toBe(0);
  });

  it('judges a tls.ca file when it is read: PEM or DER certificate, else a located problem', async () => {
    const caPem = readFileSync(new URL('../fixtures/certs/fixture-ca.pem', import.meta.url), 'utf8');
    const dir = folder({ 'garbage.pem': 'not a certificate\n' });
    writeFileSync(join(dir, 'ca.pem'), caPem);
    writeFileSync(join(dir, 'ca.der'), new X509Certificate(caPem).raw);
    writeFileSync(
      join(dir, 'agent.yaml'),
      `defaults:\n  tls: { ca: ${join(dir, 'ca.der')} }\ndevices:\n  "https://192.0.2.10":\n    tls: { ca: ${join(dir, 'ca.pem')} }\n`,
    );
    writeFileSync(join(dir, 'bad.yaml'), `defaults:\n  tls: { ca: ${join(dir, 'garbage.pem')} }\n`);
    const good = await loadAgentConfig(join(dir, 'agent.yaml'));
    expect(good.problems).toEqual([]);
    const fingerprint = new X509Certificate(caPem).fingerprint256;
    expect(new X509Certificate(good.config.defaults.tls?.caPem ?? '').fingerprint256).toBe(fingerprint);
    expect(good.config.devices.get('https://192.0.2.10')?.tls?.caPem).toBe(caPem);
    const bad = await loadAgentConfig(join(dir, 'bad.yaml'));
    expect(bad.problems.map((p) => `${p.line}:${p.column} ${p.path} ${p.message}`)).toEqual([
      `2:14 defaults.tls.ca CA file ${join(dir, 'garbage.pem')} is not a certificate (PEM or DER)`,
    ]);
  });

  it("refuses a user name with ':', which HTTP Basic authentication would split", async () => {
    const dir = folder({ 'agent.yaml': 'defaults:\n  username: "ad:min"\n' });
    const { problems } = await loadAgentConfig(join(dir, 'agent.yaml'));
    expect(problems.map((p) => `${p.line}:${p.column} ${p.path} ${p.message}`)).toEqual([
      "2:13 defaults.username 'ad:min' holds ':', where HTTP Basic authentication ends the user name",
    ]);
  });

  it('applies precedence: the stick, then devices[url], then defaults', async () => {
    const secrets = folder({ 'default.pw': 'default-SeCrEt\n', 'device.pw': 'device-SeCrEt\n' });
    const agentDir = folder({
      'agent.yaml': `defaults:\n  username: fieldadmin\n  password_file: ${join(secrets, 'default.pw')}\n  tls: { insecure: true }\ndevices:\n  "https://192.0.2.10/":\n    password_file: ${join(secrets, 'device.pw')}\n    tls: { fingerprint_sha256: "${PIN}" }\n`,
    });
    const { config } = await loadAgentConfig(join(agentDir, 'agent.yaml'));
    const stickDir = folder({
      'mpprov.yaml': `version: 1\nmonitoring_points:\n  - { name: a, url: "https://192.0.2.10" }\n  - { name: b, url: "https://192.0.2.11" }\n  - { name: c, url: "https://192.0.2.12", username: tech, password: "stick-SeCrEt" }\n`,
    });
    const stick = await loadStick(join(stickDir, 'mpprov.yaml'));
    const access = [0, 1, 2]
      .map((i) => resolveDeviceAccess(stick, i, config))
      .map((r) => ('access' in r ? r.access : r.problem));
    // b would get the laptop's default password over `insecure: true`: the trust boundary refuses
    // it (laptop credentials go only where agent.yaml vouches for the device's identity); c brings
    // its own password, so agent.yaml's insecure may carry it.
    expect(access.map((a) => ('url' in a ? [a.username, a.password.reveal(), a.trust.kind] : a.message))).toEqual([
      ['fieldadmin', 'device-SeCrEt', 'fingerprint'],
      "refused before any connection: https://192.0.2.11 would receive the laptop's admin password from agent.yaml, but agent.yaml's tls for it is insecure: true, which never carries the laptop's credentials",
      ['tech', 'stick-SeCrEt', 'insecure'],
    ]);
  });

  it('a device with no password anywhere is a located problem', async () => {
    const stickDir = folder({
      'mpprov.yaml': `version: 1\nmonitoring_points:\n  - name: a\n    url: https://192.0.2.10\n    tls: { fingerprint_sha256: "${PIN}" }\n`,
    });
    const stick = await loadStick(join(stickDir, 'mpprov.yaml'), { label: 'mpprov.yaml' });
    const resolved = resolveDeviceAccess(stick, 0, (await loadAgentConfig('/nonexistent')).config);
    expect('problem' in resolved && stick.place(resolved.problem)).toEqual({
      severity: 'error',
      file: 'mpprov.yaml',
      line: 3,
      column: 5,
      path: 'monitoring_points[0]',
      message:
        'no admin password for https://192.0.2.10: the stick gives none and agent.yaml holds none for this device',
      hint: 'add password_file: to the stick\'s entry, or a password for "https://192.0.2.10" under devices: (or defaults:) in agent.yaml',
    });
  });
});
