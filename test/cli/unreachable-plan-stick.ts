import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { tempFolder } from '../support/temp-folder.js';

/**
 * A stick folder whose one MP refuses connections (https://127.0.0.1:1): `plan` of it fails after
 * its retries, having loaded everything a plan against a device would use. The tests of what a
 * command loads run it.
 */
export async function unreachablePlanStick(prefix: string): Promise<{ folder: string; config: string }> {
  const folder = tempFolder(prefix);
  await writeFile(join(folder, 'admin.pw'), 'not-a-real-password\n', { mode: 0o600 });
  const config = join(folder, 'mpprov.yaml');
  await writeFile(
    config,
    [
      'version: 1',
      'monitoring_points:',
      '  - name: nowhere',
      '    url: https://127.0.0.1:1',
      '    username: admin',
      '    password_file: admin.pw',
      '    tls: { insecure: true }',
      '    interfaces:',
      '      eth1:',
      '        ipv4: { method: dhcp }',
      '',
    ].join('\n'),
  );
  return { folder, config };
}
