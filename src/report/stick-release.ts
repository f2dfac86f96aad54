/**
 * What became of a stick once its job was written down, and the one sentence every signal says
 * about it (the result file, the status page, the notification): "safe to remove" only after the
 * agent's unmount (or udisks power-off) succeeded, never before it and never instead of it.
 */
export type StickRelease =
  /** Unmounted by the agent: it may be pulled. */
  | { kind: 'released'; how: string }
  /** Everything is on the stick and synced, but it is still mounted (`why`: the unmount's failure). */
  | { kind: 'kept'; why: string }
  /** Pulled before its result was on it: the result waits in the agent for its next insertion. */
  | { kind: 'pulled' }
  /** Not pulled, but its result could not be written to it (`why`); it is written at its next insertion. */
  | { kind: 'unwritten'; why: string };

export function releaseSentence(release: StickRelease): string {
  switch (release.kind) {
    case 'released':
      return 'Results written and synced; the agent unmounted the stick: it is safe to remove.';
    case 'kept':
      return `Results written and synced; the agent could not unmount it (${release.why}): unmount it from the desktop before pulling it.`;
    case 'pulled':
      return 'The stick was removed before its result was written: insert it again to get the result.';
    case 'unwritten':
      return `The result could not be written to the stick (${release.why}): insert it again to get the result.`;
  }
}
