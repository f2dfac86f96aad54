import { copyFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import type { TestPki } from '../support/test-pki.js';
import { tempFolder } from '../support/temp-folder.js';

export const ADMIN_PASSWORD = 'Admin-Preflight-Secret-7702';

/**
 * A stick folder for the preflight tests: one Monitoring Point whose `interfaces` block is the
 * test's own YAML (indented under `interfaces:`), with the lab PKI's files it names copied in.
 * The device URL is a loopback port nobody listens on, unless a test gives another one as data:
 * preflight never sends it anything.
 */
export function preflightStick(
  pki: TestPki,
  interfaces: string,
  files: readonly string[] = [],
  more = '',
  url = 'https://127.0.0.1:9',
): string {
  const dir = tempFolder('preflight-stick');
  for (const name of files) copyFileSync(pki.path(name), join(dir, name));
  writeFileSync(
    join(dir, 'mpprov.yaml'),
    [
      'version: 1',
      'monitoring_points:',
      '  - name: mp-lab',
      `    url: ${url}`,
      `    password: ${ADMIN_PASSWORD}`,
      '    tls: { insecure: true }',
      '    interfaces:',
      ...interfaces
        .trim()
        .split('\n')
        .map((line) => `      ${line}`),
      more,
    ].join('\n'),
  );
  return dir;
}

export interface PreflightJson {
  port: string;
  monitoring_point: string | null;
  interface: string | null;
  dot1x: { outcome: string; method?: string; cause: string };
  dhcp: { outcome: string; address?: string; gateway?: string; dns?: string[] };
  gateway_answers: boolean | null;
  fits: boolean | null;
  problems: string[];
}

export function parseReport(stdout: string): PreflightJson {
  return JSON.parse(stdout) as PreflightJson;
}
