import { describe, expect, it } from 'vitest';
import { openStateStore } from '../../src/agent/state-store.js';
import { Redactor } from '../../src/core/redact.js';
import { tempFolder } from '../support/temp-folder.js';

/**
 * Text owed to a pulled stick is kept as a note in the state folder and matched to a stick by its
 * label AND its configuration's hash: anyone can label a stick MPPROV, so a different stick with
 * the same label receives (and uses up) nothing.
 */
describe('notes owed to a stick', () => {
  const A = 'a'.repeat(64);
  const B = 'b'.repeat(64);

  it('go only to the stick with the same label and the same configuration', async () => {
    const state = await openStateStore(tempFolder('state'), new Redactor());
    await state.addNote({
      id: 'j20260101-000000-0001',
      kind: 'interrupted',
      created: '2026-01-01T00:00:00Z',
      label: 'MPPROV',
      config_sha256: A,
      text: 'job stopped at step 3\n',
    });

    expect(await state.notesFor('MPPROV', B)).toEqual([]);
    expect(await state.notesFor('OTHER', A)).toEqual([]);
    expect(await state.notesFor('MPPROV', '')).toEqual([]);
    const mine = await state.notesFor('MPPROV', A);
    expect(mine.map((n) => n.id)).toEqual(['j20260101-000000-0001']);
    expect(mine[0]?.text).toBe('job stopped at step 3\n');
  });
});
