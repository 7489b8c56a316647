package io.srdma.channel;

import io.srdma.verbs.WcStatus;

/**
 * Told of write completions on the thread that polls the client's completion lane: the lane's
 * thread ({@code srdma-client-cq-<k>}), or a caller of {@link SecureRdmaClient#pollCompletions()}
 * of this client or of any other client of the same lane (the lane's completion queue is shared by
 * the queue pairs of several clients of the process, and whoever polls it handles them all). Keep
 * it short and non-blocking: it holds up every completion behind it, the other clients' of its lane
 * included. Allocation-free on the client's side.
 *
 * <p>Thread safety: called by one polling thread at a time (not always the same one); an
 * implementation shared with other threads must publish its state safely. Not called once {@link
 * SecureRdmaClient#close()} returned (unless close was called on the polling thread itself: the
 * batch being handled still ends); while it closes, the flushed completions of writes still
 * outstanding may be reported with their error status. Buffers: none are passed; the written
 * buffers were the caller's again as soon as the write call returned.
 */
@FunctionalInterface
public interface WriteCompletionHandler {
  /**
   * Every record up to {@code position} completed; {@code status} is {@code SUCCESS}, or the status
   * of the first record that failed (the queue pair is then in error and every later write fails
   * too).
   */
  void onWritesCompleted(long position, WcStatus status);
}
