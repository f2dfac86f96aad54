import { describe, expect, it } from 'vitest';
import { shiftedBase64, startEchoingDevice } from '../support/echoing-device.js';
import { runCli } from '../support/run-cli.js';
import { secretForms } from '../support/secret-forms.js';
import { stateDir, stickHead, stickWithConfig } from '../support/stick-workspace.js';

/**
 * A device whose error quotes the 802.1X password in disguise: base64 of it after one or two other
 * bytes (24 and 28 characters, under any "long run" bound and matching none of the password's own
 * forms), or with U+200B between its characters (a terminal draws that as the plain password).
 * `mpprov apply`, text and --json, built CLI as a child process against a real HTTPS device on
 * loopback: what it prints must not show the password, however a terminal draws it.
 */
const PASSWORD = 'Dot1x-Disguise-Kp77';

const dot1x = `    interfaces:
      eth0:
        ipv4: { method: dhcp }
        dot1x: { eap: peap, inner: mschapv2, identity: mp01@corp.example, password: "${PASSWORD}" }
`;

/** What a terminal draws: default-ignorable characters are drawn as nothing. */
const drawn = (text: string): string => text.replace(/\p{Default_Ignorable_Code_Point}/gu, '');

async function applyAgainst(
  style: 'shifted-base64' | 'zero-width',
): Promise<{ outputs: string; message: string; text: string }> {
  const device = await startEchoingDevice(style);
  try {
    const file = stickWithConfig(stickHead(device, dot1x));
    const engine = ['--agent-config', '/nonexistent/agent.yaml', '--state-dir', stateDir(), '--allow-disconnect'];
    const text = await runCli(['apply', file, ...engine]);
    const json = await runCli(['apply', '--json', file, ...engine]);
    expect([text.code, json.code], text.stdout + text.stderr).toEqual([1, 1]);
    expect(device.bodies().some((b) => b.includes(PASSWORD))).toBe(true);
    const lines = json.stdout
      .trim()
      .split('\n')
      .map((line) => JSON.parse(line) as { type?: string; result?: { message?: string } });
    const message = lines.find((l) => l.type === 'device-result')?.result?.message ?? json.stdout;
    return { outputs: [text.stdout, text.stderr, json.stdout, json.stderr].join('\n'), message, text: text.stdout };
  } finally {
    device.close();
  }
}

describe('a device that echoes the 802.1X password in disguise', () => {
  it(
    'base64 shifted by one or two bytes: hidden as encoded data, in text and --json',
    { timeout: 60_000 },
    async () => {
      const { outputs, message } = await applyAgainst('shifted-base64');
      expect(message).toMatch(
        /: refused wpa_password: \[encoded data, \d+ characters, not shown\] or \[encoded data, \d+ characters, not shown\]$/,
      );
      const shifted = [shiftedBase64(PASSWORD, 'x'), shiftedBase64(PASSWORD, 'xy')];
      expect(shifted.map((s) => s.length)).toEqual([28, 28]);
      expect(shifted.filter((s) => outputs.includes(s) || outputs.includes(s.replace(/=+$/, '')))).toEqual([]);
      expect(secretForms(PASSWORD).filter((form) => outputs.includes(form))).toEqual([]);
    },
  );

  it(
    'zero-width spaces between its characters: each shown as \\u200b, never drawn as the password',
    {
      timeout: 60_000,
    },
    async () => {
      const { outputs, text } = await applyAgainst('zero-width');
      expect(text).toContain(`refused wpa_password: ${[...PASSWORD].join('\\u200b')}`);
      expect(outputs).not.toMatch(/\p{Default_Ignorable_Code_Point}/u);
      expect(drawn(outputs)).not.toContain(PASSWORD);
      expect(secretForms(PASSWORD).filter((form) => drawn(outputs).includes(form))).toEqual([]);
    },
  );
});
