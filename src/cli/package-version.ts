import { readFileSync } from 'node:fs';

/** The agent's version, from package.json (dist/cli/ and src/cli/ both sit two levels below it). */
export function packageVersion(): string {
  const text = readFileSync(new URL('../../package.json', import.meta.url), 'utf8');
  return (JSON.parse(text) as { version: string }).version;
}
