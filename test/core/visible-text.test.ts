import { describe, expect, it } from 'vitest';
import { Redactor, Secret, visibleJson, visibleLines, visibleText, visibleValue } from '../../src/core/index.js';

describe('visibleText', () => {
  it('writes newline, carriage return and ESC sequences as visible escapes', () => {
    expect(visibleText('forge\nRESULT: CHANGED  forge')).toBe('forge\\nRESULT: CHANGED  forge');
    expect(visibleText('a\r\nb')).toBe('a\\r\\nb');
    expect(visibleText('\x1b]0;pwned\x07\x1b[2K\x1b[1A')).toBe('\\x1b]0;pwned\\x07\\x1b[2K\\x1b[1A');
    expect(visibleText('\x00\x08\x0b\x0c\x1f')).toBe('\\x00\\x08\\x0b\\x0c\\x1f');
  });

  it('escapes DEL, C1, the bidi controls and the line and paragraph separators', () => {
    expect(visibleText('\x7f\x80\x85\x9b\x9f')).toBe('\\x7f\\x80\\x85\\x9b\\x9f');
    const bidi = '\u061c\u200e\u200f\u202a\u202b\u202c\u202d\u202e\u2066\u2067\u2068\u2069';
    expect(visibleText(bidi)).toBe(
      '\\u061c\\u200e\\u200f\\u202a\\u202b\\u202c\\u202d\\u202e\\u2066\\u2067\\u2068\\u2069',
    );
    expect(visibleText('a\u2028b\u2029c')).toBe('a\\u2028b\\u2029c');
  });

  it('keeps tab, printable text, other Unicode and backslashes as they are, so a second pass changes nothing', () => {
    const plain = 'branch-12-mp1\tÄ é ✓ 日本 C:\\path \\x1b already';
    expect(visibleText(plain)).toBe(plain);
    const once = visibleText('x\x1b[31my\u202ez\n');
    expect(visibleText(once)).toBe(once);
    expect(once).toBe('x\\x1b[31my\\u202ez\\n');
  });

  it('escapes invisible format characters, so a secret with zero-width spaces in it does not read as the secret', () => {
    const spaced = [...'Dot1x-Secret'].join('\u200b');
    expect(visibleText(spaced)).toBe(
      'D\\u200bo\\u200bt\\u200b1\\u200bx\\u200b-\\u200bS\\u200be\\u200bc\\u200br\\u200be\\u200bt',
    );
    expect(visibleText('a\u00adb\u200c\u200d\u2060\u2064\ufeff\ufe0fc')).toBe(
      'a\\xadb\\u200c\\u200d\\u2060\\u2064\\ufeff\\ufe0fc',
    );
    expect(visibleText('tag\u{e0041}\u{e007f}')).toBe('tag\\u{e0041}\\u{e007f}');
    expect(visibleText(visibleText(spaced))).toBe(visibleText(spaced));
  });

  it('leaves no raw control character in any string of all 65536 code units', () => {
    let all = '';
    for (let code = 0; code < 0x10000; code++) all += String.fromCharCode(code);
    const out = visibleText(all);
    // eslint-disable-next-line no-control-regex -- the very characters that must not survive
    expect(out).not.toMatch(/[\u0000-\u0008\u000a-\u001f\u007f-\u009f\u061c\u200e\u200f\u2028-\u202e\u2066-\u2069]/);
    expect(out).toContain('\t');
  });
});

describe('visibleJson', () => {
  it('escapes what JSON.stringify leaves raw and parses back to the same value', () => {
    const value = { name: 'mp\u202e1\x85\x7f\u2028', other: 'a\nb\x1b' };
    const json = visibleJson(JSON.stringify(value, null, 2));
    expect(json).toContain('mp\\u202e1\\u0085\\u007f\\u2028');
    expect(json).toContain('a\\nb\\u001b');
    // eslint-disable-next-line no-control-regex -- the very characters that must not survive
    expect(json).not.toMatch(/[\u0000-\u0008\u000b-\u001f\u007f-\u009f\u061c\u200e\u200f\u2028-\u202e\u2066-\u2069]/);
    expect(JSON.parse(json)).toEqual(value);
  });
  it('escapes invisible format characters, astral ones as their surrogate pair, and parses back the same', () => {
    const value = { name: 'p\u200ba\u200bss', tag: 'x\u{e0041}' };
    const json = visibleJson(JSON.stringify(value));
    expect(json).toBe('{"name":"p\\u200ba\\u200bss","tag":"x\\udb40\\udc41"}');
    expect(JSON.parse(json)).toEqual(value);
  });
});

describe('visibleLines and visibleValue', () => {
  it('keeps the composer’s own newlines and escapes everything else on each line', () => {
    expect(visibleLines('plan\n  1. \x1b]0;t\x07step\r')).toBe('plan\n  1. \\x1b]0;t\\x07step\\r');
  });

  it('escapes every string of a value, keys included, and leaves other values alone', () => {
    const at = new Date(0);
    expect(visibleValue({ 'a\n': ['x\x1b', 1, null, true], at, nested: { label: 'L\u202e' } })).toEqual({
      'a\\n': ['x\\x1b', 1, null, true],
      at,
      nested: { label: 'L\\u202e' },
    });
  });
});

describe('the redactor and escaped text', () => {
  it('knows a secret in its escaped forms, as a device sentence escaped before redaction shows it', () => {
    const secret = 'pa\u202ess\x85wörd-4711';
    const redactor = new Redactor([new Secret(secret)]);
    expect(redactor.text(`echo: ${visibleText(secret)}`)).toBe('echo: (secret)');
    expect(redactor.text(visibleJson(JSON.stringify({ echo: secret })))).toBe('{"echo":"(secret)"}');
  });
});
