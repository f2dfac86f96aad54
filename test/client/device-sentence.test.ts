import { describe, expect, it } from 'vitest';
import { oneLine } from '../../src/http/index.js';

/** A peer's sentence made fit for one line of mpprov's own: bounded, cut visibly, encoded runs hidden. */
describe('oneLine', () => {
  const none = (text: string): string => text;

  it('cuts a long sentence and says where and of how much', () => {
    const said = `${'word '.repeat(200)}end`;
    expect(oneLine(said, none, 300)).toBe(
      `${said.slice(0, 300).trimEnd()}... (cut at 300 of ${said.length} characters)`,
    );
  });

  it('hides runs of base64, hex and percent-encoding longer than 40 characters, whatever they hold', () => {
    const body = JSON.stringify({ name: 'eth0', wpa_password: 'Not-Known-To-Any-Redactor-1' });
    for (const encoded of [
      Buffer.from(body).toString('base64'),
      Buffer.from(body).toString('base64url'),
      Buffer.from(body).toString('hex'),
      encodeURIComponent(body),
    ])
      expect(oneLine(`bad: ${encoded} refused`, none, 500)).toBe(
        `bad: [encoded data, ${encoded.length} characters, not shown] refused`,
      );
  });

  it('leaves ordinary sentences, short tokens and rows of dots as they are', () => {
    const said = `address 192.0.2.10/24 of eth0 is in use by 00:11:22:33:44:55 ${'.'.repeat(60)} see /api/v1/interface/`;
    expect(oneLine(said, none, 500)).toBe(said);
  });

  it('hides short encoded runs a secret alone fits in: shifted base64, hex, hex bytes, percent-escapes', () => {
    const secret = 'Dot1xSecret-Kp77';
    const bytes = Buffer.from(secret);
    for (const encoded of [
      Buffer.from(`x${secret}`).toString('base64'),
      Buffer.from(`xy${secret}`).toString('base64'),
      Buffer.from(`x${secret}`).toString('base64url'),
      'eERvdDF4U2VjcmV0LUtwNzc=',
      bytes.toString('hex').slice(0, 16),
      bytes.toString('hex').toUpperCase(),
      [...bytes].map((b) => b.toString(16).padStart(2, '0')).join(':'),
      [...bytes].map((b) => b.toString(16).padStart(2, '0')).join(' '),
      [...bytes].map((b) => b.toString(16).padStart(2, '0')).join('-'),
      [...bytes].map((b) => `%${b.toString(16)}`).join(' '),
      [...bytes].map((b) => `%${b.toString(16)}`).join(''),
      '%44%6f%74%31',
      '44:6f:74:31:78:53:65',
    ]) {
      const said = oneLine(`echo ${encoded} | refused.`, none, 500);
      expect(said, encoded).toBe(`echo [encoded data, ${encoded.length} characters, not shown] | refused.`);
    }
  });

  it('hides a shifted base64 value quoted as key=value, and keeps the key', () => {
    for (const encoded of [
      Buffer.from('xDot1xSecret-Kp77').toString('base64'),
      Buffer.from('xyDot1xSecret-Kp77').toString('base64'),
    ])
      expect(oneLine(`pw=${encoded}.`, none, 500), encoded).toBe(
        `pw=[encoded data, ${encoded.length} characters, not shown].`,
      );
  });

  it('keeps long words, paths, URLs, names and a MAC address readable', () => {
    const said =
      'Internationalization of wpa_password failed for eth0: see https://mp.example.com/api/v1/status ' +
      'and /api/v1/appliance/capability, certificate-authority-2024 expired, station 00:11:22:33:44:55 at 192.0.2.10';
    expect(oneLine(said, none, 500)).toBe(said);
  });

  it('redacts known secrets before the runs are hidden, so a secret is never left half shown', () => {
    const redact = (text: string): string => text.replaceAll('Spaced  out secret', '(secret)');
    expect(oneLine(`x ${'A'.repeat(50)}Spaced  out secret tail`, redact, 500)).toBe(
      'x [encoded data, 50 characters, not shown](secret) tail',
    );
  });
});
