import { mkdtempSync } from 'node:fs';
import { join } from 'node:path';
import { inject } from 'vitest';

declare module 'vitest' {
  export interface ProvidedContext {
    /** The folder every temporary file of this test run lives under (made by test/global-setup.ts). */
    tempRoot: string;
  }
}

/**
 * A new, empty folder under the run's root, which global setup removes when the run ends: the
 * sticks, PKIs and state folders the tests make do not pile up in /tmp. Tests that need a folder
 * gone earlier, or in a particular order (a mounted stick), still remove it themselves.
 */
export function tempFolder(name: string): string {
  return mkdtempSync(join(inject('tempRoot'), `${name}-`));
}
