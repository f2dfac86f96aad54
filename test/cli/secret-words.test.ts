import { readdirSync, readFileSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { startEchoingDevice } from '../support/echoing-device.js';
import { runCli } from '../support/run-cli.js';
import { secretForms } from '../support/secret-forms.js';
import { useSimulator } from '../support/simulator-fixture.js';
import {
  PROFILE_ADMIN_PASSWORD,
  PROFILE_DEVICE,
  stateDir,
  stickHead,
  stickWithConfig,
} from '../support/stick-workspace.js';

/**
 * Secrets made of ordinary words: the redactor replaces each whole value, in every form, and
 * leaves every other sentence exactly as it was, even one that shares the secret's words
 * ("use a gateway ..., or correct the prefix length"). Real child processes, a real simulated
 * device over HTTPS, and every byte they wrote searched.
 */
const PEAP = 'use a gateway, Mallory!';
const WIFI = 'correct horse battery staple';

const formsOf = secretForms;

const interfaces = (gateway: string, caCert = ', ca_cert: certs/radius-ca.pem') => `    interfaces:
      eth1:
        ipv4: { method: static, address: 192.0.2.20/24, gateway: ${gateway} }
        dot1x: { eap: peap, inner: mschapv2, identity: mp01@corp.example, password: "${PEAP}"${caCert} }
      wlan0:
        wireless: { ssid: CorpWiFi, security: wpa2-personal, passphrase: "${WIFI}" }
        ipv4: { method: dhcp }
`;

const { sim: device } = useSimulator(PROFILE_DEVICE);

describe('secrets made of ordinary words', () => {
  it('leave every other message intact and are never printed in any form', { timeout: 60_000 }, async () => {
    const invalid = stickWithConfig(stickHead(device, interfaces('192.0.3.1')));
    const valid = stickWithConfig(stickHead(device, interfaces('192.0.2.1')));
    const state = stateDir();
    const engine = ['--agent-config', '/nonexistent/agent.yaml', '--state-dir', state];

    const validateText = await runCli(['validate', invalid]);
    const validateJson = await runCli(['validate', '--json', invalid]);
    const planText = await runCli(['plan', valid, ...engine]);
    const planJson = await runCli(['plan', '--json', valid, ...engine]);
    const applyJson = await runCli(['apply', '--json', valid, ...engine]);
    const applyText = await runCli(['apply', valid, ...engine]);
    const runs = [validateText, validateJson, planText, planJson, applyJson, applyText];
    expect(runs.map((r) => [r.code, r.stderr])).toEqual([
      [1, ''],
      [1, ''],
      [2, ''],
      [2, ''],
      [0, ''],
      [0, ''],
    ]);

    // The one problem of the invalid file, word for word: the old word masking made it
    // "use a (secret) inside the interface's subnet, or (secret) the prefix length".
    const line =
      readFileSync(invalid, 'utf8')
        .split('\n')
        .findIndex((l) => l.includes('192.0.3.1')) + 1;
    const column = (readFileSync(invalid, 'utf8').split('\n')[line - 1] ?? '').indexOf('192.0.3.1') + 1;
    const gateway = {
      path: 'monitoring_points[0].interfaces.eth1.ipv4.gateway',
      message: 'gateway 192.0.3.1 is outside the subnet of 192.0.2.20/24',
      hint: "use a gateway inside the interface's subnet, or correct the prefix length",
    };
    expect([line, column]).toEqual([9, 66]);
    expect(validateText.stdout).toBe(
      `${invalid}:${line}:${column}  ${gateway.path}  ${gateway.message}  (${gateway.hint})\n${invalid}: INVALID (1 error, 0 warnings)\n`,
    );
    expect(JSON.parse(validateJson.stdout)).toMatchObject({
      valid: false,
      problems: [{ severity: 'error', line, column, ...gateway }],
    });

    // The plan's and apply's own words survive too; the secrets show as "(changed)" or not at all.
    expect(planText.stdout).toContain('      gateway: "192.0.2.1"');
    expect(planText.stdout).toContain('      wpa_password: (changed)');
    expect(planText.stdout).toContain('      passphrase: (changed)');
    expect(applyText.stdout).toContain('RESULT: NO CHANGE (mp1 no-change)');
    expect(JSON.parse(applyJson.stdout.trim().split('\n').at(-1) ?? '{}')).toMatchObject({
      type: 'result',
      outcome: 'changed',
    });

    const stateFiles = readdirSync(state, { recursive: true, encoding: 'utf8' })
      .map((f) => join(state, f))
      .filter((f) => statSync(f).isFile());
    expect(stateFiles.map((f) => f.slice(state.length + 1)).sort()).toEqual([
      'secrets-record.json',
      'secrets-record.key',
    ]);
    const everything = [
      ...runs.flatMap((r) => [r.stdout, r.stderr]),
      ...stateFiles.map((f) => readFileSync(f, 'utf8')),
    ].join('\n');
    const searched = [PEAP, WIFI, PROFILE_ADMIN_PASSWORD].flatMap(formsOf);
    // Three secrets, each in at least six forms (some forms coincide for a plain value).
    expect(searched.length).toBeGreaterThanOrEqual(18);
    expect(searched.filter((form) => everything.includes(form))).toEqual([]);
  });

  it('stay hidden when a device echoes them back base64, hex and URL-encoded', { timeout: 60_000 }, async () => {
    // A device whose 400 quotes each field of our request in three encodings, and the
    // Authorization header as it came: a real HTTPS server on loopback.
    const device = await startEchoingDevice('encoded');
    try {
      const file = stickWithConfig(stickHead(device, interfaces('192.0.2.1', '')));
      const state = stateDir();
      const engine = ['--agent-config', '/nonexistent/agent.yaml', '--state-dir', state, '--restart-timeout', '5'];
      const runs = [await runCli(['apply', file, ...engine]), await runCli(['apply', '--json', file, ...engine])];
      expect(runs.map((r) => r.code)).toEqual([1, 1]);
      // The device's sentence is there, with the secrets' places taken by the placeholder.
      expect(runs[0]?.stdout).toMatch(
        /refused \(Basic \(secret\)\): .*wpa_password=\(secret\)\|\(secret\)\|\(secret\)/,
      );
      const stateFiles = readdirSync(state, { recursive: true, encoding: 'utf8' })
        .map((f) => join(state, f))
        .filter((f) => statSync(f).isFile());
      const everything = [
        ...runs.flatMap((r) => [r.stdout, r.stderr]),
        ...stateFiles.map((f) => readFileSync(f, 'utf8')),
      ].join('\n');
      const basic = Buffer.from(`admin:${PROFILE_ADMIN_PASSWORD}`).toString('base64');
      const searched = [...[PEAP, WIFI, PROFILE_ADMIN_PASSWORD].flatMap(formsOf), basic];
      expect(searched.length).toBeGreaterThanOrEqual(19);
      expect(searched.filter((form) => everything.includes(form))).toEqual([]);
    } finally {
      device.close();
    }
  });
});
