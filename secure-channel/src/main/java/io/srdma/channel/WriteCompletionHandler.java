package io.srdma.channel;

import io.srdma.verbs.WcStatus;

/**
 * Told of write completions on the thread that polls the client's completion queue (the client's
 * poller thread, or a caller of {@link SecureRdmaClient#pollCompletions()}): keep it short and
 * non-blocking, it holds up every completion behind it. Allocation-free on the client's side.
 *
 * <p>Thread safety: called by one polling thread at a time; an implementation shared with other
 * threads must publish its state safely. Buffers: none are passed; the written buffers were the
 * caller's again as soon as the write call returned.
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
