import { readFileSync, readdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { validateStick } from '../../src/certs/index.js';
import { hasErrors } from '../../src/config/index.js';
import { STICK_SECRET_KEYS } from '../../src/config/schema.js';
import { profilesDir, stickWithConfig } from '../support/stick-workspace.js';
import { expectLocated, expectNoSecret, printedProblems } from './located-problems.js';
import {
  documentMutations,
  FUZZ_TIMEOUT_MS,
  fuzzParameters,
  fuzzRuns,
  traceInput,
  keysOf,
  mutateDocument,
  withinBound,
} from './mutations.js';

/**
 * A stick's mpprov.yaml, mutated at random from every valid profile and
 * fixture, through `mpprov validate`'s own entry (validateStick over real files in a stick folder
 * with the profiles' certificates and secrets): it never throws, gives a valid model or located
 * problems, takes less than the bound, and no problem as printed quotes a secret.
 */

const FIXTURE = fileURLToPath(new URL('../fixtures/config/stick-folder/mpprov.yaml', import.meta.url));

/** Inline secrets planted in the profiles in place of their secret files: password, passphrase, 802.1X password. */
const PLANTED = {
  device: 'Plant3d-Dev1ce-Pw',
  peap: 'Plant3d-Peap-Pw',
} as const;

const profiles = readdirSync(profilesDir)
  .filter((f) => f.endsWith('.yaml'))
  .map((f) => readFileSync(join(profilesDir, f), 'utf8'));
const bases = [
  ...profiles,
  readFileSync(FIXTURE, 'utf8'),
  // The same profiles with inline secrets, so that a mutation can break the YAML around one.
  ...profiles.map((text) =>
    text
      .replace('password_file: secrets/admin.pw', `password: "${PLANTED.device}"`)
      .replace(/password_file: secrets\/mp01-peap\.pw/g, `password: ${PLANTED.peap}`),
  ),
];

/** The values of the secret files on the stick: a secret wherever a mutation lets the loader read them from. */
const secretFiles = readdirSync(join(profilesDir, 'secrets')).map((f) =>
  readFileSync(join(profilesDir, 'secrets', f), 'utf8').trim(),
);

const secretKeys = [...STICK_SECRET_KEYS].join('|');
const INLINE_SECRET = new RegExp(`^\\s*(?:-\\s+)?(?:${secretKeys})\\s*:\\s+["']?([^"'\\s#][^"'#]*?)["']?\\s*$`, 'gm');
const inlineSecrets = [...new Set(bases.flatMap((text) => [...text.matchAll(INLINE_SECRET)].map((m) => m[1] ?? '')))];

/**
 * The inline secrets the mutated file still gives as secrets: each occurrence of the value written
 * as the value of a secret key. A mutation that renamed the key (`pasword:`) or copied the value
 * under another key made it ordinary text as far as any loader can know, so it is not searched.
 */
function stillSecret(text: string): string[] {
  return inlineSecrets.filter((value) => {
    const occurrences = text.split(value).length - 1;
    if (occurrences === 0) return false;
    const escaped = value.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
    const asSecret = new RegExp(
      `(?:^|[\\s{,])["']?(?:${secretKeys})["']?\\s*:[ \\t]+["']?${escaped}(?![^\\s"',}#])`,
      'g',
    );
    return (text.match(asSecret) ?? []).length === occurrences;
  });
}

describe('fuzz: a mutated stick configuration through mpprov validate', () => {
  it(
    'never throws, is valid or has located problems, stays within the bound, and quotes no secret',
    async () => {
      expect(bases.length).toBeGreaterThan(20);
      expect(inlineSecrets).toEqual(expect.arrayContaining([PLANTED.device, PLANTED.peap, 'example-wifi-passphrase']));
      expect(secretFiles.length).toBe(3);
      // One stick folder for every run: only mpprov.yaml changes, the certificates and secrets stay.
      const file = stickWithConfig(bases[0] ?? '');
      const keys = keysOf(bases);
      let valid = 0;
      let refused = 0;
      await fc.assert(
        fc.asyncProperty(fc.nat({ max: bases.length - 1 }), documentMutations(keys), async (base, mutations) => {
          const bytes = mutateDocument(bases[base] ?? '', mutations);
          writeFileSync(file, bytes);
          traceInput([base, mutations]);
          const validated = await withinBound('validateStick', () => validateStick(file, { label: 'mpprov.yaml' }));
          const text = bytes.toString('utf8');
          if (validated.model !== undefined && !hasErrors(validated.problems)) valid++;
          else {
            refused++;
            expect(hasErrors(validated.problems), 'no model, yet no error says why').toBe(true);
          }
          expectLocated(validated.problems, 'mpprov.yaml', text.split('\n').length);
          expectNoSecret(printedProblems(validated.problems, validated), [...secretFiles, ...stillSecret(text)]);
        }),
        fuzzParameters('stick configuration', fuzzRuns()),
      );
      // Both outcomes occurred: the mutations neither always break the file nor never do.
      expect(valid).toBeGreaterThan(0);
      expect(refused).toBeGreaterThan(0);
    },
    FUZZ_TIMEOUT_MS,
  );
});
