import { describe, expect, it } from 'vitest';
import { startEchoingDevice } from '../support/echoing-device.js';
import { applyFile } from './apply-helpers.js';
import { PROFILE_ADMIN_PASSWORD, stickHead, stickWithConfig } from '../support/stick-workspace.js';

/**
 * A device whose 400 quotes the request body back, secrets and all: nothing of it may reach
 * mpprov's events or results. (A real HTTPS server on loopback; the simulator never echoes.)
 */
describe('a device that echoes our request in its error', () => {
  it('cannot make mpprov show a secret', async () => {
    const device = await startEchoingDevice('raw');
    try {
      const file = stickWithConfig(
        stickHead(
          device,
          `    interfaces:
      wlan0:
        wireless: { ssid: Corp, security: wpa2-personal, passphrase: "Echoed-SeCrEt-Pass" }
        ipv4: { method: dhcp }
`,
        ),
      );
      const { result, events } = await applyFile(file);
      expect(result.devices[0]?.outcome).toBe('failed');
      expect(result.devices[0]?.message).toContain('(secret)');
      const everything = JSON.stringify({ result, events });
      expect(everything).not.toContain('Echoed-SeCrEt-Pass');
      expect(everything).not.toContain(PROFILE_ADMIN_PASSWORD);
      expect(everything).not.toContain(Buffer.from(`admin:${PROFILE_ADMIN_PASSWORD}`).toString('base64'));
    } finally {
      device.close();
    }
  });

  it('cannot leak a secret by the way mpprov folds and cuts the device sentence to one line', async () => {
    // Double spaces fold to one, and the one-line cut at 500 characters falls inside the value:
    // the request's own secrets are redacted from the device's raw text before either happens.
    const passphrase = 'Spaced  out  pass  phrase  42';
    const device = await startEchoingDevice('decoded-long');
    try {
      const file = stickWithConfig(
        stickHead(
          device,
          `    interfaces:
      wlan0:
        wireless: { ssid: Corp, security: wpa2-personal, passphrase: "${passphrase}" }
        ipv4: { method: dhcp }
`,
        ),
      );
      const { result, events } = await applyFile(file);
      expect(result.devices[0]?.outcome).toBe('failed');
      expect(result.devices[0]?.message).toContain('passphrase=(secret)');
      const everything = JSON.stringify({ result, events });
      for (const piece of ['Spaced out pass', 'Spaced  out', 'phrase  42', 'out  pass'])
        expect(everything).not.toContain(piece);
    } finally {
      device.close();
    }
  });
});
