import { createInterface } from 'node:readline';
import { mkdir, rm, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { visibleText } from '../core/visible-text.js';
import { formatKeyPath, type KeyPath, type StickFileContent } from '../config/index.js';
import { Dot1xOutcome, type Dot1xVerdict } from './preflight-report.js';
import { ipIn, spawnIn, type PortSession } from './port-namespace.js';
import type { PreflightTarget } from './select-target.js';
import {
  eapMethodOf,
  FILE_SLOTS,
  overlongOptions,
  renderSupplicantConfig,
  type SupplicantFiles,
} from './supplicant-config.js';
import { hasCarrier, readVerdict, verdictAtDeadline } from './supplicant-verdict.js';

/** A running supplicant: it keeps the port authorized while DHCP and the gateway probe run. */
export interface SupplicantRun {
  verdict: Dot1xVerdict;
}

/**
 * Writes the supplicant's configuration and the stick's certificate and key files (each 0600, in
 * the session's 0700 folder), runs `wpa_supplicant -D wired` on the port inside the namespace and
 * reads its lines until they decide a verdict or `timeoutMs` passes. The configuration holds the
 * secrets: it is removed as soon as the supplicant has read it, and the folder goes with the session.
 */
export async function runSupplicant(
  session: PortSession,
  device: string,
  target: PreflightTarget & { dot1x: NonNullable<PreflightTarget['dot1x']> },
  stickFiles: ReadonlyMap<string, StickFileContent>,
  timeoutMs: number,
): Promise<SupplicantRun> {
  const { block, path } = target.dot1x;
  const method = eapMethodOf(block);
  const folder = join(session.dir, 'supplicant');
  await mkdir(folder, { mode: 0o700 });
  const files = await writeStickFiles(folder, path, stickFiles);
  const text = renderSupplicantConfig(block, files);
  const overlong = overlongOptions(text);
  if (overlong.length > 0)
    return {
      verdict: {
        outcome: Dot1xOutcome.Error,
        method,
        // wpa_supplicant would read the rest of such a line as a line of its own: refused, not tried.
        cause: `the stick's 802.1X value for wpa_supplicant's ${overlong.join(', ')} is too long for its configuration (a line holds at most 1 999 bytes), so the port was not tried`,
      },
    };
  const config = join(folder, 'wpa_supplicant.conf');
  await writeFile(config, text, { mode: 0o600 });

  const child = spawnIn(session, session.tools.wpaSupplicant, ['-D', 'wired', '-i', device, '-c', config]);
  const lines: string[] = [];
  const context = { method, identity: block.identity };
  const verdict = await new Promise<Dot1xVerdict>((resolve) => {
    let settled = false;
    const settle = (value: Dot1xVerdict) => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      resolve(value);
    };
    // At the deadline the port's link is looked at: an unplugged cable is not a port without 802.1X.
    const timer = setTimeout(
      () =>
        void ipIn(session, ['-j', 'link', 'show', 'dev', device]).then((link) =>
          settle(verdictAtDeadline(lines, method, Math.round(timeoutMs / 1000), hasCarrier(link.stdout))),
        ),
      timeoutMs,
    );
    const onLine = (line: string) => {
      // A line of any length from a daemon is kept short: the verdict reads events, not essays.
      lines.push(line.slice(0, 1_000));
      // Removed once the supplicant has read it, so the secrets need not wait on disk for the
      // verdict. Its first line about the port comes after the file is read; "Successfully
      // initialized" comes before, and removing the file there lost the race on a loaded laptop
      // (the supplicant ended with "Failed to open config file").
      if (line.startsWith(`${device}: `)) void rm(config, { force: true });
      const decided = readVerdict(lines, context);
      if (decided !== undefined) settle(decided);
    };
    createInterface({ input: child.stdout as NodeJS.ReadableStream }).on('line', onLine);
    createInterface({ input: child.stderr as NodeJS.ReadableStream }).on('line', onLine);
    child.once('error', (error) =>
      settle({ outcome: Dot1xOutcome.Error, method, cause: `wpa_supplicant did not start: ${error.message}` }),
    );
    child.once('exit', (code) => {
      // Lines may still be in the pipes: judge after they are read.
      setImmediate(() =>
        settle(
          readVerdict(lines, context) ?? {
            outcome: Dot1xOutcome.Error,
            method,
            cause: `wpa_supplicant ended (exit status ${String(code)}) before a verdict: ${lastWords(lines)}`,
          },
        ),
      );
    });
  });
  await rm(config, { force: true });
  return { verdict };
}

/** The last line the supplicant said: data, escaped, not a sentence of ours. */
function lastWords(lines: readonly string[]): string {
  const last = lines.filter((l) => l.trim() !== '').at(-1) ?? 'it said nothing';
  return JSON.stringify(visibleText(last.slice(0, 200)));
}

async function writeStickFiles(
  folder: string,
  blockPath: KeyPath,
  stickFiles: ReadonlyMap<string, StickFileContent>,
): Promise<SupplicantFiles> {
  const files: SupplicantFiles = {};
  for (const { key, slot } of FILE_SLOTS) {
    const content = stickFiles.get(formatKeyPath([...blockPath, ...key]));
    if (content === undefined) continue;
    // The name's extension only (.pfx, .der, .pem): the supplicant needs nothing else of it.
    const extension = /\.[A-Za-z0-9]{1,5}$/.exec(content.name)?.[0] ?? '';
    const file = join(folder, `${slot}${extension}`);
    await writeFile(file, content.bytes, { mode: 0o600 });
    files[slot] = file;
  }
  return files;
}
