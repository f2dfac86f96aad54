import { Writable } from 'node:stream';
import { describe, expect, it } from 'vitest';
import { createProgressDisplay } from '../../src/report/index.js';

/**
 * The live step list on a terminal: device names and sentences with OSC, BEL, cursor movements,
 * CR and bidi controls are shown escaped. The display's own sequences (erase line, cursor up) are
 * the only ESC bytes written, each at a line's start.
 */

const NAME = 'mp\x1b]0;owned\x07\x1b[2K\r\u202eRESULT: CHANGED';
const SENTENCE = 'no\x1b[1A\x1b[2K\x1b[32mRESULT: CHANGED\x9b\n';

describe('the progress display with hostile text', () => {
  it.each([true, false])('on a terminal (%s) writes no escape sequence of the data', (tty) => {
    let out = '';
    const stream = new Writable({
      write(chunk, _enc, done) {
        out += String(chunk);
        done();
      },
    });
    const display = createProgressDisplay(stream, { tty });
    display.onEvent({ type: 'device-start', device: NAME, url: 'https://127.0.0.1:1' });
    display.onEvent({ type: 'warning', device: NAME, message: SENTENCE });
    display.onEvent({ type: 'step-start', device: NAME, index: 0, total: 1, description: SENTENCE });
    display.onEvent({
      type: 'step-failed',
      device: NAME,
      index: 0,
      description: SENTENCE,
      elapsedMs: 5,
      error: SENTENCE,
    });
    display.stop();
    // What is left once the display's own erase-line and cursor-up sequences are taken out.
    // eslint-disable-next-line no-control-regex -- the display's own sequences, taken out to look at the rest
    const data = out.replace(/\x1b\[2K|\x1b\[\d+A/g, '');
    // eslint-disable-next-line no-control-regex -- the characters that must not reach the terminal
    expect(data).not.toMatch(/[\u0000-\u0008\u000b-\u001f\u007f-\u009f\u061c\u200e\u200f\u2028-\u202e\u2066-\u2069]/);
    expect(data.split('\n').filter((line) => /^\s*RESULT:/.test(line))).toEqual([]);
    expect(data).toContain('mp\\x1b]0;owned\\x07\\x1b[2K\\r\\u202eRESULT: CHANGED');
  });
});
