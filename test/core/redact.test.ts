import { createHmac } from 'node:crypto';
import { inspect } from 'node:util';
import { describe, expect, it } from 'vitest';
import { Redactor, Secret } from '../../src/core/index.js';
// The list of forms is the redactor's own detail, not part of core's public surface.
import { secretForms } from '../../src/core/redact.js';

/** The one redactor: each exact secret value and the forms programs turn it into, nothing else. */
describe('the redactor', () => {
  const value = 'Tr0ub4dor & "3"/ü';
  const redactor = new Redactor([new Secret(value)]);
  const bytes = Buffer.from(value, 'utf8');

  it('replaces the value and each of its forms with one placeholder', () => {
    const forms: [string, string][] = [
      ['the value', value],
      ['JSON-escaped', JSON.stringify(value).slice(1, -1)],
      ['JSON-escaped twice (a JSON message inside JSON)', JSON.stringify(JSON.stringify(value)).slice(3, -3)],
      ['JSON with non-ASCII as \\u escapes', 'Tr0ub4dor & \\"3\\"/\\u00fc'],
      ['encodeURIComponent', encodeURIComponent(value)],
      ['the form encoding, + for spaces', new URLSearchParams([['pw', value]]).toString().slice(3)],
      ['encodeURIComponent with + for spaces', encodeURIComponent(value).replace(/%20/g, '+')],
      ['lower-case percent escapes', encodeURIComponent(value).replace(/%[0-9A-F]{2}/g, (e) => e.toLowerCase())],
      ['base64', bytes.toString('base64')],
      ['base64 without padding', bytes.toString('base64').replace(/=+$/, '')],
      ['base64url', bytes.toString('base64url')],
      ['hex', bytes.toString('hex')],
      ['HEX', bytes.toString('hex').toUpperCase()],
    ];
    expect(forms.length).toBe(13);
    const results = forms.map(([what, form]) => [what, redactor.text(`device said: ${form} is wrong`)]);
    expect(results).toEqual(forms.map(([what]) => [what, 'device said: (secret) is wrong']));
  });

  it('lists the forms it looks for, the value first, each once', () => {
    const forms = secretForms('use a gateway');
    expect(forms[0]).toBe('use a gateway');
    expect(forms).toEqual([...new Set(forms)]);
    expect(forms).toEqual(
      expect.arrayContaining([
        'use%20a%20gateway',
        'use+a+gateway',
        'dXNlIGEgZ2F0ZXdheQ',
        '75736520612067617465776179',
      ]),
    );
  });

  it('knows each secret reversed, as a device may echo it to slip past a filter', () => {
    const redactor = new Redactor([new Secret('Dot1x-Secret-Kp77')]);
    expect(redactor.text('device said: 77pK-terceS-x1toD is wrong')).toBe('device said: (secret) is wrong');
    expect(secretForms('Dot1x-Secret-Kp77')).toContain('77pK-terceS-x1toD');
  });

  it('masks no single word of a secret: other text stays exactly as it was', () => {
    const words = new Redactor([new Secret('correct horse battery staple'), new Secret('use a gateway, Mallory')]);
    const hint = "use a gateway inside the interface's subnet, or correct the prefix length";
    expect(words.text(hint)).toBe(hint);
    expect(words.text('wpa_passphrase "correct horse battery staple" refused')).toBe(
      'wpa_passphrase "(secret)" refused',
    );
    expect(words.holdsSecret(hint)).toBe(false);
  });

  it('replaces the longest secret first, so one that holds another is replaced whole', () => {
    const nested = new Redactor([new Secret('abcd1234'), new Secret('zzabcd1234-longer')]);
    expect(nested.text('got zzabcd1234-longer and abcd1234')).toBe('got (secret) and (secret)');
  });

  it('never rewrites its own placeholder, even for a secret that is a word inside it', () => {
    const word = new Redactor([new Secret('secret'), new Secret('hunter2-long-value')]);
    expect(word.text('hunter2-long-value then secret')).toBe('(secret) then (secret)');
  });

  it('hides a secret that itself contains the placeholder, in every form', () => {
    const redactor = new Redactor([new Secret('correct horse (secret) battery')]);
    expect(redactor.text('"wpa_password":"correct horse (secret) battery" was refused')).toBe(
      '"wpa_password":"(secret)" was refused',
    );
    expect(redactor.text(`pw=${encodeURIComponent('correct horse (secret) battery')}`)).toBe('pw=(secret)');
    expect(redactor.text('x(secret)y')).toBe('x(secret)y');
  });

  it('leaves no tail of two secrets that overlap or touch', () => {
    const redactor = new Redactor([new Secret('abcdefghij'), new Secret('hijklmnop')]);
    expect(redactor.text('[abcdefghijklmnop]')).toBe('[(secret)]');
    expect(redactor.text('[abcdefghijhijklmnop]')).toBe('[(secret)]');
    expect(redactor.text('abcdefghij and hijklmnop')).toBe('(secret) and (secret)');
  });

  it('short secrets: under 4 characters not looked for; under 8 only where they stand alone', () => {
    const short = new Redactor([new Secret('abc'), new Secret('s3cr'), new Secret('Pa55w0rd')]);
    expect(short.text('abc and abcdef')).toBe('abc and abcdef');
    expect(short.text('wrong key s3cr for eth1, "s3cr", pw=s3cr&x, but s3cret-file.pem')).toBe(
      'wrong key (secret) for eth1, "(secret)", pw=(secret)&x, but s3cret-file.pem',
    );
    expect(short.text('xPa55w0rdx')).toBe('x(secret)x');
  });

  it('knows a secret for as long as it was added, counted per holder', () => {
    const shared = new Redactor();
    const first = shared.add([new Secret('job-secret-1')]);
    const second = shared.add([new Secret('job-secret-1')]);
    first();
    first();
    expect(shared.text('job-secret-1')).toBe('(secret)');
    second();
    expect(shared.text('job-secret-1')).toBe('job-secret-1');
  });

  it('redacts plain data deeply and keeps class instances, which print themselves', () => {
    const secret = new Secret('deep-secret-1');
    const deep = new Redactor([secret]);
    const out = deep.value({ a: ['x deep-secret-1 y', { b: 'deep-secret-1' }], keep: secret, n: 3, when: new Date(0) });
    expect(out).toEqual({ a: ['x (secret) y', { b: '(secret)' }], keep: secret, n: 3, when: new Date(0) });
    expect(out.keep).toBe(secret);
    expect(new Redactor([secret]).json({ message: 'echo "deep-secret-1"' })).toBe('{"message":"echo \\"(secret)\\""}');
  });
});

describe('a Secret', () => {
  const secret = new Secret('s3cret-value');

  it('prints, serialises and inspects as (secret)', () => {
    expect([String(secret), JSON.stringify({ secret }), inspect({ secret })]).toEqual([
      '(secret)',
      '{"secret":"(secret)"}',
      '{ secret: (secret) }',
    ]);
  });

  it('hashes with a key as the secrets record always did: context parts and value, NUL between', () => {
    const key = Buffer.alloc(32, 7);
    const before = createHmac('sha256', key)
      .update('https://192.0.2.10\0eth1 inet\0wpa_password\0s3cret-value')
      .digest('hex');
    expect(secret.keyedHash(key, ['https://192.0.2.10', 'eth1 inet', 'wpa_password'])).toBe(before);
  });

  it('answers a check on its form without giving the value, and prefixes a copy', () => {
    expect(secret.satisfies((v) => v.length === 12)).toBe(true);
    const basic = secret.prefixed('admin:');
    expect(new Redactor([basic]).text(Buffer.from('admin:s3cret-value').toString('base64'))).toBe('(secret)');
  });
});
