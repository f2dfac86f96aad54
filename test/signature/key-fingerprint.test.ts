import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { keyFingerprint } from '../../src/signature/index.js';
import { tempFolder } from '../support/temp-folder.js';
import { useSigningRig } from './signing-rig.js';

/** The signer `stick build --sign KEY` writes into sticks.json, from real ssh-keygen keys, or why not. */
const rig = useSigningRig();

describe('keyFingerprint', () => {
  it('names the key by its SHA-256 fingerprint and comment, from the private key or its .pub', async () => {
    const fromPrivate = await keyFingerprint(rig.keys.team);
    expect(fromPrivate.ok && fromPrivate.signer).toMatch(/^SHA256:[A-Za-z0-9+/]{43} team$/);
    expect(await keyFingerprint(`${rig.keys.team}.pub`)).toEqual(fromPrivate);
  });

  it('says a path with no file, a folder, and a file that is no SSH key, each as what it is', async () => {
    const dir = tempFolder('key-fingerprint');
    expect(await keyFingerprint(join(dir, 'tema'))).toEqual({
      ok: false,
      message: `there is no key file ${join(dir, 'tema')}`,
    });
    mkdirSync(join(dir, 'keys'));
    expect(await keyFingerprint(join(dir, 'keys'))).toEqual({
      ok: false,
      message: `${join(dir, 'keys')} is not a file: give the signing key's file`,
    });
    writeFileSync(join(dir, 'notes.txt'), 'not a key\n');
    expect(await keyFingerprint(join(dir, 'notes.txt'))).toEqual({
      ok: false,
      message:
        'ssh-keygen cannot read this as an SSH key (give the private key, or its .pub with the key in ssh-agent)',
    });
  });
});
