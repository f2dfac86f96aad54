import { spawnSync } from 'node:child_process';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { Secret, type Interface } from '../../src/config/index.js';
import { overlongOptions, renderSupplicantConfig } from '../../src/preflight/supplicant-config.js';
import { tempFolder } from '../support/temp-folder.js';

/**
 * A hostile stick's 802.1X values against the real wpa_supplicant's configuration reader: what
 * the supplicant reads back (its debug dump, keys shown) must be the stick's bytes exactly, under
 * the options we wrote and no other. The supplicant is pointed at an interface that does not
 * exist, so it reads its configuration and stops: nothing is sent anywhere.
 */

type Dot1x = NonNullable<Interface['dot1x']>;

const dir = tempFolder('hostile-supplicant');

let files = 0;

/** wpa_supplicant's debug output (keys shown) for `config`, on an interface that does not exist. */
function supplicantReading(config: string): string {
  files += 1;
  const file = join(dir, `wpa-${files}.conf`);
  writeFileSync(file, config, { mode: 0o600 });
  const run = spawnSync('wpa_supplicant', ['-D', 'wired', '-i', 'mppfnosuchif0', '-c', file, '-dd', '-K'], {
    encoding: 'utf8',
    timeout: 10_000,
  });
  if (run.error !== undefined) throw new Error(`wpa_supplicant could not run: ${run.error.message}`);
  return run.stdout;
}

/** Each option wpa_supplicant read in the network block, with its value's bytes (hex). */
function readBack(config: string): Map<string, string> {
  const stdout = supplicantReading(config);
  const lines = stdout.split('\n');
  const start = lines.findIndex((l) => l.includes('start of a new network block'));
  const end = lines.findIndex((l) => l.startsWith('Priority group'));
  expect(start, stdout.slice(0, 2_000)).toBeGreaterThan(0);
  expect(end, stdout.slice(0, 2_000)).toBeGreaterThan(start);
  const read = new Map<string, string>();
  let current: string | undefined;
  for (const line of lines.slice(start + 1, end)) {
    const dump = /^(\S+) - hexdump_ascii\(len=\d+\):$/.exec(line);
    const bytes = /^ {5}((?:[0-9a-f]{2} )+)/.exec(line);
    if (dump?.[1] !== undefined) {
      current = dump[1];
      read.set(current, '');
    } else if (bytes?.[1] !== undefined && current !== undefined) {
      read.set(current, `${read.get(current) ?? ''}${bytes[1].replace(/ /g, '')}`);
    } else {
      current = undefined;
      const option = /^([a-z_0-9 ]+?)(:| - hexdump\()/.exec(line)?.[1];
      if (option !== undefined) read.set(option, '?');
    }
  }
  return read;
}

const hex = (text: string): string => Buffer.from(text, 'utf8').toString('hex');

const HOSTILE = [
  ['a quote then a hash', 'pa"ss#word'],
  ['a hash between quotes', '"#"'],
  ['a backslash and a quote', 'a\\"b\\'],
  ['a closing brace and a new network block', 'x"\n}\nnetwork={\n\tkey_mgmt=NONE\n'],
  ['a NUL byte', 'be\u0000fore'],
  ['a carriage return', 'a\rphase1="peapver=1"'],
  ['a lone surrogate (not UTF-8)', 'a\ud800b'],
  ['spaces at both ends', '  spaced  '],
  ['a hash alone', 'pass#word'],
] as const;

describe('the supplicant reads back exactly the stick values, under our options only', () => {
  it.each(HOSTILE)('%s', (_name, value) => {
    const dot1x: Dot1x = {
      eap: 'peap',
      inner: 'mschapv2',
      identity: value,
      anonymous_identity: `anon-${value}`,
      password: new Secret(value),
      private_key_password: new Secret(`k${value}`),
    };
    const config = renderSupplicantConfig(dot1x, { caCert: join(dir, 'ca#"cert.pem') });
    const read = readBack(config);
    // A lone surrogate has no UTF-8 form of its own: the supplicant gets U+FFFD's bytes in its place.
    const bytes = hex;
    expect(Object.fromEntries(read)).toEqual({
      key_mgmt: '?',
      'eap methods': '?',
      identity: bytes(value),
      anonymous_identity: bytes(`anon-${value}`),
      password: bytes(value),
      ca_cert: bytes(join(dir, 'ca#"cert.pem')),
      phase1: hex('peapver=0'),
      phase2: hex('auth=MSCHAPV2'),
      private_key_passwd: bytes(`k${value}`),
    });
  });

  it('refuses a value whose line the supplicant would split, naming the option and not the value', () => {
    const long = `${'A'.repeat(1_990)}phase1="peapver=1"`;
    const config = renderSupplicantConfig(
      { eap: 'md5', identity: 'md5user', password: new Secret(long) },
      { caCert: '/private/caCert.pem' },
    );
    expect(overlongOptions(config)).toEqual(['password']);
    // What the refusal prevents: the supplicant reads the tail as a line of its own.
    expect(supplicantReading(config)).toMatch(/failed to parse network block/);
    // A line of 1 999 bytes is still read whole.
    const fits = `${'B'.repeat(1_999 - '\tidentity=""'.length)}`;
    const config2 = renderSupplicantConfig({ eap: 'md5', identity: fits }, {});
    expect(overlongOptions(config2)).toEqual([]);
    expect(readBack(config2).get('identity')).toBe(hex(fits));
  });
});
