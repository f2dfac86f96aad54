import { randomBytes } from 'node:crypto';
import { readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';

/**
 * The unguessable path segment of the receiver's URL: made once, kept in the state folder, so the
 * registered URL survives restarts while a stranger who finds the port still gets 404s.
 */
const PATH_FILE = 'observe-path';

export async function receiverSegment(stateDir: string): Promise<string> {
  const file = join(stateDir, PATH_FILE);
  const kept = (await readFile(file, 'utf8').catch(() => '')).trim();
  if (/^[0-9a-f]{32}$/.test(kept)) return kept;
  const made = randomBytes(16).toString('hex');
  await writeFile(file, `${made}\n`, { mode: 0o600 });
  return made;
}

/** `public_url` with the segment appended: `https://prov.example.net:8472/mpprov-events/<segment>`. */
export function registeredUrl(publicUrl: string, segment: string): string {
  return `${publicUrl.replace(/\/+$/, '')}/${segment}`;
}
