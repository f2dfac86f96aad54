import { describe, expect, it } from 'vitest';
import { type EchoStyle, startEchoingDevice } from '../support/echoing-device.js';
import { runCli } from '../support/run-cli.js';
import { secretForms } from '../support/secret-forms.js';
import { stateDir, stickHead, stickWithConfig } from '../support/stick-workspace.js';

/**
 * A device whose error quotes our whole request body back encoded as one (base64, hex, URL): the
 * 802.1X password inside is at no fixed offset, so no form of the password alone finds it. The
 * device's sentence is cut and its long encoded runs hidden: `mpprov apply`, text and --json,
 * built CLI as a child process against a real HTTPS device on loopback.
 */
const PASSWORD = 'Whole-Body-Echo-Pass-93';

const dot1x = `    interfaces:
      eth0:
        ipv4: { method: dhcp }
        dot1x: { eap: peap, inner: mschapv2, identity: mp01@corp.example, password: "${PASSWORD}" }
`;

/** The body as sent, in each encoding: any 24 characters of it in an output mean the echo got through. */
function echoedWindows(style: EchoStyle): (body: string) => string[] {
  const encode = (body: string): string =>
    style === 'body-base64'
      ? Buffer.from(body).toString('base64')
      : style === 'body-hex'
        ? Buffer.from(body).toString('hex')
        : encodeURIComponent(body);
  return (body) => {
    const text = encode(body);
    const windows: string[] = [];
    for (let at = 0; at + 24 <= text.length; at += 8) windows.push(text.slice(at, at + 24));
    return windows;
  };
}

describe('a device that echoes the whole request body encoded', () => {
  it.each<EchoStyle>(['body-base64', 'body-hex', 'body-url'])(
    '%s: apply says what the device refused, shows no encoded run and no password',
    { timeout: 60_000 },
    async (style) => {
      const device = await startEchoingDevice(style);
      try {
        const file = stickWithConfig(stickHead(device, dot1x));
        const engine = ['--agent-config', '/nonexistent/agent.yaml', '--state-dir', stateDir(), '--allow-disconnect'];
        const text = await runCli(['apply', file, ...engine]);
        const json = await runCli(['apply', '--json', file, ...engine]);
        expect([text.code, json.code], text.stdout + text.stderr).toEqual([1, 1]);
        const lines = json.stdout
          .trim()
          .split('\n')
          .map((line) => JSON.parse(line) as { type?: string; result?: { message?: string } });
        const message = lines.find((l) => l.type === 'device-result')?.result?.message ?? json.stdout;
        // The redactor finds the password's own hex and URL form inside such an echo (byte-aligned) and
        // says (secret) there; base64 of the whole body holds it at an offset no secret form matches.
        expect(message).toMatch(
          /^POST eth0 inet \(update\) failed: the device refused POST \/interface\/ \(eth0 inet\): (\[encoded data, \d+ characters, not shown\]|\(secret\))+ is not a valid request$/,
        );
        expect(text.stdout).toContain('[encoded data, ');

        const outputs = [text.stdout, text.stderr, json.stdout, json.stderr].join('\n');
        const bodies = device.bodies();
        expect(bodies.some((b) => b.includes(PASSWORD))).toBe(true);
        const windows = bodies.flatMap(echoedWindows(style));
        expect(windows.length).toBeGreaterThan(0);
        expect(windows.filter((w) => outputs.includes(w))).toEqual([]);
        expect(secretForms(PASSWORD).filter((form) => outputs.includes(form))).toEqual([]);
      } finally {
        device.close();
      }
    },
  );
});
