// The writer side of fat-power-loss.test.ts: appends job lines to usb.log through the built
// usb.log writer, a still-running trailer after each, and reports each line once it is durable.
import { statSync } from 'node:fs';

const root = process.argv[2];
const { createUsbLogWriter } = await import(new URL('../../dist/report/index.js', import.meta.url).href);
const log = createUsbLogWriter({ root, device: statSync(root).dev });
const line = (n) => `line ${n} ${'x'.repeat(30 + ((n * 37) % 200))}`;
for (let n = 0; ; n++) {
  log.append(`${line(n)}\n`);
  log.setTrailer(`still running after line ${n}\n`);
  await log.flush();
  if (!log.status().ok) break;
  process.stdout.write(`written ${n + 1}\n`);
}
