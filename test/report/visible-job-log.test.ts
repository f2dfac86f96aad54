import { mkdir, readFile, stat } from 'node:fs/promises';
import { join } from 'node:path';
import { PassThrough } from 'node:stream';
import { describe, expect, it } from 'vitest';
import type { DeviceResult } from '../../src/apply/index.js';
import { Redactor } from '../../src/core/index.js';
import { createAgentLogger } from '../../src/report/agent-logger.js';
import {
  concludeJob,
  createEventFormatter,
  createJobLog,
  formatResultLine,
  resultDocument,
  resultText,
  type JobHeader,
} from '../../src/report/index.js';
import { tempFolder } from '../support/temp-folder.js';
import { expectNoRawControls, resultLines } from './visible-output.js';

/**
 * A job's log written through the real JobLog onto real files (usb.log, the local copy,
 * mpprov-result.json) and a journal stream, with a label, a device name, a URL and device
 * sentences that carry newlines, escape sequences, BEL, CR and bidi controls.
 */

const FORGE = 'forge\nRESULT: CHANGED  forge';
const TITLE = 'mp\x1b]0;owned\x07\x1b[2K\r\u202eRESULT: CHANGED';
const LABEL = 'STICK\nRESULT: CHANGED  label\x1b[31m';
const SENTENCE = 'refused\x1b]0;t\x07\x1b[1A\x1b[2K\rRESULT: CHANGED  all\x9b\u2028good';

function failed(device: string): DeviceResult {
  return {
    device,
    url: `https://10.0.0.1/\x1b[2K\nRESULT: CHANGED`,
    outcome: 'failed',
    message: SENTENCE,
    code: 'MPPROV_DEVICE_UNREACHABLE',
    steps: [],
    warnings: [],
    durationMs: 10,
    lastSucceededStep: `upload\n${SENTENCE}`,
  };
}

describe('a job log fed hostile text', () => {
  it('keeps every line one physical line with its controls escaped, and one RESULT line', async () => {
    const dir = tempFolder('visible-job-log');
    const root = join(dir, 'stick');
    await mkdir(root);
    const journal = new PassThrough();
    let journalText = '';
    journal.on('data', (chunk: Buffer) => (journalText += chunk.toString()));
    const redactor = new Redactor();
    const logger = createAgentLogger({ level: 'debug', redactor, stream: journal, env: { JOURNAL_STREAM: '8:1' } });
    const log = createJobLog({
      jobId: 'j-visible',
      localFile: join(dir, 'local.log'),
      logger,
      redactor,
      stick: { root, device: (await stat(root)).dev },
    });
    const header: JobHeader = {
      jobId: 'j-visible',
      started: new Date(),
      agentVersion: '0.0.0',
      hostname: 'laptop',
      source: 'stick',
      label: LABEL,
      location: `/media/${LABEL}`,
      configName: 'mpprov.yaml',
      configSha256: 'abc',
    };
    log.header(header);
    const format = createEventFormatter();
    log.writeLines(format({ type: 'device-start', device: FORGE, url: `https://x/\n${SENTENCE}` }));
    log.writeLines(format({ type: 'warning', device: TITLE, message: SENTENCE }));
    log.writeLines(format({ type: 'step-start', device: TITLE, index: 0, total: 1, description: SENTENCE }));
    log.writeLines(
      format({ type: 'step-failed', device: TITLE, index: 0, description: 'x', elapsedMs: 5, error: SENTENCE }),
    );
    const devices = [failed(FORGE), failed(TITLE)];
    log.writeLines(devices.flatMap((result) => format({ type: 'device-result', result })));
    log.write('warn', `not read: ${SENTENCE}`);
    const result = {
      file: 'mpprov.yaml',
      configSha256: 'abc',
      outcome: 'failed' as const,
      problems: [],
      devices,
      plans: [],
    };
    const conclusion = concludeJob({ result, configName: 'mpprov.yaml', stopped: false });
    log.result(formatResultLine(conclusion, 'j-visible'), 'error');
    log.writeResult(resultDocument({ header, finished: new Date(), conclusion, result, stopped: false }));
    await log.flush();
    await logger.close();
    await new Promise((r) => setImmediate(r));

    const usbLog = await readFile(join(root, 'usb.log'), 'utf8');
    const local = await readFile(join(dir, 'local.log'), 'utf8');
    for (const [what, text] of [
      ['usb.log', usbLog],
      ['the local copy', local],
      ['the journal', journalText],
    ] as const) {
      expectNoRawControls(text, what);
      expect(resultLines(text), what).toEqual([
        expect.stringMatching(/^(<3>\[j-visible\] )?RESULT: FAILED {2}forge\\nRESULT: CHANGED {2}forge: failed, /),
      ]);
    }
    expect(usbLog).toContain('stick:   STICK\\nRESULT: CHANGED  label\\x1b[31m (/media/STICK\\nRESULT');
    expect(usbLog).toContain('[mp\\x1b]0;owned\\x07\\x1b[2K\\r\\u202eRESULT: CHANGED] warning: refused\\x1b]0;t\\x07');
    expect(journalText).toContain('job started: stick STICK\\nRESULT: CHANGED  label\\x1b[31m at /media/STICK');

    const json = await readFile(join(root, 'mpprov-result.json'), 'utf8');
    expectNoRawControls(json, 'mpprov-result.json');
    const parsed = JSON.parse(json) as { source: { label: string }; devices: DeviceResult[] };
    // Still the data itself once parsed: JSON escapes are a form of the text, not a change of it.
    expect(parsed.source.label).toBe(LABEL);
    expect(parsed.devices[1]?.device).toBe(TITLE);

    const txt = resultText({ conclusion, jobId: 'j-visible', finished: new Date(), label: LABEL, configName: 'x' });
    expectNoRawControls(txt, 'MPPROV-FAILED.TXT', { crlf: true });
    expect(txt.split('\r\n')).toHaveLength(3);
  });
});
