package io.srdma.channel;

import io.srdma.verbs.WcStatus;
import java.util.concurrent.atomic.AtomicBoolean;

/**
 * Whether a client's session is usable, shared by its control channel, writer, reader and poller:
 * closed locally, lost (the first cause wins), and the first failed completion of its queue pair.
 * Thread-safe; the checks read volatiles only and allocate nothing.
 */
final class SessionState {
  final String name;
  private final AtomicBoolean closed = new AtomicBoolean();
  private volatile ChannelException lost;
  private volatile WcStatus dataPathFailure;

  SessionState(String name) {
    this.name = name;
  }

  /** Marks the session closed locally; true for the first call. */
  boolean close() {
    return closed.compareAndSet(false, true);
  }

  boolean isClosed() {
    return closed.get();
  }

  /** Records why the session was lost; true when this is the first cause. */
  synchronized boolean lose(ChannelException cause) {
    if (lost != null) {
      return false;
    }
    lost = cause;
    return true;
  }

  ChannelException lost() {
    return lost;
  }

  boolean isOpen() {
    return !closed.get() && lost == null;
  }

  /** Records a failed completion; the first one is kept (flushes name it as their cause). */
  void dataPathFailed(WcStatus status) {
    if (status != WcStatus.SUCCESS && dataPathFailure == null) {
      synchronized (this) {
        if (dataPathFailure == null) {
          dataPathFailure = status;
        }
      }
    }
  }

  WcStatus dataPathFailure() {
    return dataPathFailure;
  }

  /**
   * 0 when data may be written, else {@link WriteResult#SESSION_CLOSED} or {@code
   * DATA_PATH_FAILED}.
   */
  long writeRefusal() {
    if (closed.get() || lost != null) {
      return WriteResult.SESSION_CLOSED;
    }
    return dataPathFailure == null ? 0 : WriteResult.DATA_PATH_FAILED;
  }

  /** Why the session cannot be used (allocates: failure path only), or null when it can. */
  ChannelException unusable() {
    ChannelException gone = lost;
    if (closed.get() || gone != null) {
      return new ChannelException(
          ChannelException.Reason.SESSION_CLOSED,
          gone == null ? null : gone.detail(),
          "session is over" + (gone == null ? "" : ": " + gone.getMessage()),
          gone);
    }
    WcStatus failure = dataPathFailure;
    if (failure != null) {
      return new ChannelException(
          DataPathFailure.reason(failure, null), "the queue pair failed earlier with " + failure);
    }
    return null;
  }
}
