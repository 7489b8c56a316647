package io.srdma.channel;

import io.srdma.verbs.WcStatus;
import io.srdma.verbs.WorkCompletion;

/**
 * One client's part of a completion lane's dispatch: its queue pair's completions go to its writer
 * or reader, and write successes of one polled batch are reported together (one {@link
 * SealedWriter#onCompletion} call, so one {@link WriteCompletionHandler} call, per client per
 * batch). Called by whichever thread holds the lane's poll lock, one at a time; allocates nothing.
 */
final class CompletionTarget {
  final SessionState state;
  private final SealedWriter writer;
  private final SealedReader reader;

  // Guarded by the lane's poll lock: the batch being dispatched.
  private long lastWrite = -1;
  private WcStatus writeStatus = WcStatus.SUCCESS;
  boolean touched;

  CompletionTarget(SessionState state, SealedWriter writer, SealedReader reader) {
    this.state = state;
    this.writer = writer;
    this.reader = reader;
  }

  /** One completion of this client's queue pair, in the queue pair's order. */
  void onCompletion(WorkCompletion wc) {
    WcStatus status = wc.status();
    state.dataPathFailed(status);
    long wrId = wc.wrId();
    if ((wrId & (SealedReader.READ_WR | SealedReader.RAW_WR)) != 0) {
      reader.onCompletion(status);
    } else if (status != WcStatus.SUCCESS) {
      flush();
      writer.onCompletion(wrId, status);
    } else {
      lastWrite = wrId; // successes of one batch are reported together, by flush
      writeStatus = status;
    }
  }

  /** Reports the write successes held back in this batch. */
  void flush() {
    if (lastWrite >= 0) {
      long upTo = lastWrite;
      lastWrite = -1;
      writer.onCompletion(upTo, writeStatus);
    }
  }

  /** The lane's completion queue failed: the data path of this client is lost with it. */
  void laneFailed() {
    state.dataPathFailed(WcStatus.FATAL_ERR);
  }

  @Override
  public String toString() {
    return state.name;
  }
}
