/**
 * When a watch's next round is due: at its regular time, or earlier at the deadline of a waiter
 * whose last look is still to come, but never sooner than the minimum gap after the last round,
 * nor in the past. Shared by the connection and the measuring rounds.
 */
export function roundDue(
  regularAt: number,
  waiters: Iterable<{ lastSentAt: number; deadline: number }>,
  notBefore: number,
): number {
  let due = regularAt;
  for (const waiter of waiters) if (waiter.lastSentAt < waiter.deadline) due = Math.min(due, waiter.deadline);
  return Math.max(due, notBefore);
}
