/** The reader went away: a pipe's (EPIPE), a closed terminal's (EIO), a stream already ended. */
const GONE = new Set(['EPIPE', 'EIO', 'ERR_STREAM_DESTROYED']);

/**
 * `mpprov validate ... | head -1`, a journal that restarts, a terminal closed under a running
 * `apply`: the reader of stdout or stderr goes away and the next write fails with EPIPE (EIO on a
 * terminal), which Node throws as an unhandled 'error' event, a stack trace and the end of the
 * process, in the middle of a device's restart if it comes then. Output nobody reads any more is
 * not worth stopping the work for: such a stream is left alone from then on, the command goes on
 * and exits as it would have. Any other write error is still thrown.
 */
export function keepGoingWhenOutputCloses(
  streams: readonly NodeJS.WriteStream[] = [process.stdout, process.stderr],
): void {
  for (const stream of streams) {
    stream.on('error', (error: NodeJS.ErrnoException) => {
      if (error.code !== undefined && GONE.has(error.code)) return;
      throw error;
    });
  }
}
