import type { ChildProcessByStdio } from 'node:child_process';
import { childProcess } from '../core/child-process.js';
import type { Readable, Writable } from 'node:stream';
import { visibleText } from '../core/visible-text.js';

/**
 * flock(2) locks for a whole run, held by one helper process instead of one process per lock.
 *
 * Node has no flock, and a native addon is not worth it for one call (it would leave the one-file
 * bundle for a compiled module per Node version). The run's locks were once each held by a
 * flock(1) child (flock, then a shell, then cat): about 10 ms of fork and exec per device, with the
 * event loop stalled while Node forked, several seconds for a fleet of 100 even when nothing
 * changes. One Perl process (perl-base is Essential on Debian: always there) now opens each lock
 * file and holds its flock(2) for this process, told what to do over its stdin:
 *   `L ID WAIT HEXPATH`: open the file (created 0666 less the umask, as flock(1) does) and lock it;
 *     WAIT 0 tries once, 1 keeps trying until told `F ID`;
 *   `F ID`: close it (a lock held, or a wait given up);
 * and answers on its stdout `K ID` (locked), `B ID` (held by another, WAIT 0), `E ID REASON`
 * (cannot be opened or locked), `F ID` (closed). Paths travel in hex, so no byte of a path can
 * break a line. It keeps no clock: the caller's timer decides when a wait is over.
 *
 * A waiting lock is retried every 25 ms with LOCK_NB (a blocking flock would stall the helper's
 * other locks); the hand-over from another run is therefore at most that much later than the
 * kernel's wake-up would be. The semantics are flock(2)'s, shared with flock(1) and every other
 * holder: per open file description, so two locks of this process on one file exclude each other
 * too; over NFS Linux maps them to byte-range locks. The helper exits when its stdin closes, which
 * the kernel does when this process ends in any way (SIGKILL included), and its exit frees every
 * lock it held: a dead run still never leaves a stale lock behind.
 */
const HELPER = String.raw`
use strict; use warnings;
use Fcntl qw(:flock O_RDONLY O_CREAT O_NOCTTY);
$| = 1;
my (%held, %waiting);
my $in = '';
for (;;) {
  my $rin = ''; vec($rin, fileno(STDIN), 1) = 1;
  my $ready = select(my $rout = $rin, undef, undef, %waiting ? 0.025 : undef);
  if ($ready > 0) {
    my $got = sysread(STDIN, $in, 65536, length $in);
    exit 0 unless $got;
    while ($in =~ s/\A([^\n]*)\n//) {
      my ($op, $id, $wait, $hex) = split / /, $1;
      next unless defined $id;
      if ($op eq 'L' && defined $hex) {
        my $fh;
        if (!sysopen($fh, pack('H*', $hex), O_RDONLY | O_CREAT | O_NOCTTY, 0666)) { print "E $id $!\n"; next; }
        if (flock($fh, LOCK_EX | LOCK_NB)) { $held{$id} = $fh; print "K $id\n"; }
        elsif (!$!{EWOULDBLOCK}) { print "E $id $!\n"; close $fh; }
        elsif ($wait) { $waiting{$id} = $fh; }
        else { close $fh; print "B $id\n"; }
      } elsif ($op eq 'F') {
        my $fh = delete $held{$id};
        $fh = delete $waiting{$id} unless defined $fh;
        close $fh if defined $fh;
        print "F $id\n";
      }
    }
  }
  for my $id (keys %waiting) {
    if (flock($waiting{$id}, LOCK_EX | LOCK_NB)) { $held{$id} = delete $waiting{$id}; print "K $id\n"; }
    elsif (!$!{EWOULDBLOCK}) { print "E $id $!\n"; close(delete $waiting{$id}); }
  }
}
`;

export type FlockOutcome =
  | { kind: 'locked'; free: () => Promise<void> }
  | { kind: 'busy' }
  | { kind: 'stopped' }
  | { kind: 'failed'; reason: string };

export interface FlockRequest {
  /** Milliseconds to keep trying while another holds the lock; 0 tries once. */
  waitMs: number;
  signal?: AbortSignal | undefined;
}

type Helper = ChildProcessByStdio<Writable, Readable, null>;

interface Pending {
  /** Set when this side gave up (the wait ran out, or the signal): a late K is then let go. */
  gaveUp?: 'busy' | 'stopped';
  settle: (outcome: FlockOutcome) => void;
  /** Set once locked: resolves the free() waiting for the helper's F. */
  freed?: () => void;
}

/**
 * The helper of this process and the requests it has not finished. Module state on purpose: one
 * helper per process is the point (and a run's locks are this process's, whoever asks).
 */
let current: { child: Helper; requests: Map<number, Pending> } | undefined;
let nextId = 1;

/** Takes an exclusive flock(2) on `file` (creating it), waiting up to `waitMs` for another holder. */
export function holdFlock(file: string, request: FlockRequest): Promise<FlockOutcome> {
  if (request.signal?.aborted === true) return Promise.resolve({ kind: 'stopped' });
  let helper: NonNullable<typeof current>;
  try {
    helper = current ?? startHelper();
  } catch (error) {
    return Promise.resolve({ kind: 'failed', reason: error instanceof Error ? error.message : String(error) });
  }
  const id = nextId++;
  return new Promise((resolve) => {
    let timer: NodeJS.Timeout | undefined;
    const giveUp = (why: 'busy' | 'stopped'): void => {
      if (pending.gaveUp !== undefined) return;
      pending.gaveUp = why;
      send(helper, `F ${id}`);
    };
    const onAbort = (): void => giveUp('stopped');
    const pending: Pending = {
      settle: (outcome) => {
        clearTimeout(timer);
        request.signal?.removeEventListener('abort', onAbort);
        resolve(outcome);
      },
    };
    helper.requests.set(id, pending);
    refWhileBusy(helper);
    const wait = request.waitMs > 0;
    send(helper, `L ${id} ${wait ? 1 : 0} ${Buffer.from(file).toString('hex')}`);
    if (wait) timer = setTimeout(() => giveUp('busy'), request.waitMs);
    request.signal?.addEventListener('abort', onAbort, { once: true });
  });
}

function startHelper(): NonNullable<typeof current> {
  // The script comes from -e, never from a file another user could edit.
  const child = childProcess().spawn('perl', ['-e', HELPER], { stdio: ['pipe', 'pipe', 'ignore'] });
  const helper = { child, requests: new Map<number, Pending>() };
  current = helper;
  let buffered = '';
  child.stdout.setEncoding('utf8');
  child.stdout.on('data', (chunk: string) => {
    buffered += chunk;
    let end: number;
    while ((end = buffered.indexOf('\n')) >= 0) {
      answer(helper, buffered.slice(0, end));
      buffered = buffered.slice(end + 1);
    }
  });
  // A write after the helper died fails with EPIPE: the exit below settles every request instead.
  child.stdin.on('error', () => undefined);
  const ended = (why: string): void => {
    if (current === helper) current = undefined;
    for (const pending of helper.requests.values()) {
      // A lock held by a helper that is gone is gone too (the kernel freed it): its free() has nothing to do.
      if (pending.freed !== undefined) pending.freed();
      else pending.settle(pending.gaveUp === 'stopped' ? { kind: 'stopped' } : { kind: 'failed', reason: why });
    }
    helper.requests.clear();
  };
  child.on('error', (error: NodeJS.ErrnoException) =>
    ended(error.code === 'ENOENT' ? 'perl is not installed (perl-base)' : `perl cannot be started (${error.message})`),
  );
  child.on('close', (code, signal) => ended(`the lock helper (perl) ended (${signal ?? `status ${String(code)}`})`));
  return helper;
}

function answer(helper: NonNullable<typeof current>, line: string): void {
  const [kind, idText, ...rest] = line.split(' ');
  const id = Number(idText);
  const pending = helper.requests.get(id);
  if (pending === undefined) return;
  if (kind === 'K') {
    // Locked after this side gave up: the F already sent lets it go, and its answer settles.
    if (pending.gaveUp !== undefined) return;
    pending.freed = () => {
      helper.requests.delete(id);
      refWhileBusy(helper);
    };
    pending.settle({
      kind: 'locked',
      free: () =>
        new Promise<void>((done) => {
          if (!helper.requests.has(id)) return done();
          const freed = pending.freed;
          pending.freed = () => {
            freed?.();
            done();
          };
          send(helper, `F ${id}`);
        }),
    });
    return;
  }
  if (kind === 'F') {
    if (pending.freed !== undefined) return pending.freed();
    helper.requests.delete(id);
    refWhileBusy(helper);
    pending.settle({ kind: pending.gaveUp ?? 'busy' });
    return;
  }
  helper.requests.delete(id);
  refWhileBusy(helper);
  if (kind === 'B') pending.settle({ kind: 'busy' });
  else pending.settle({ kind: 'failed', reason: visibleText(rest.join(' ').slice(0, 200)) || 'unknown error' });
}

function send(helper: NonNullable<typeof current>, line: string): void {
  if (helper.child.stdin.writable) helper.child.stdin.write(`${line}\n`);
}

/**
 * The helper keeps this process alive only while a lock is wanted or held (as the flock(1)
 * children did); idle, it must not stop the process from ending, which closes its stdin and so
 * ends it too.
 */
function refWhileBusy(helper: NonNullable<typeof current>): void {
  const busy = helper.requests.size > 0;
  // The pipes are sockets (ref/unref), though their stream types do not say so.
  const handles: unknown[] = [helper.child, helper.child.stdin, helper.child.stdout];
  for (const handle of handles) {
    if (!isReferenced(handle)) continue;
    if (busy) handle.ref();
    else handle.unref();
  }
}

function isReferenced(handle: unknown): handle is { ref(): void; unref(): void } {
  return (
    typeof handle === 'object' &&
    handle !== null &&
    'ref' in handle &&
    typeof handle.ref === 'function' &&
    'unref' in handle &&
    typeof handle.unref === 'function'
  );
}
