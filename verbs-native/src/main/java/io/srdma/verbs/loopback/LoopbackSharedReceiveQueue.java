package io.srdma.verbs.loopback;

import io.srdma.verbs.ProtectionDomain;
import io.srdma.verbs.ReceiveWorkRequest;
import io.srdma.verbs.SharedReceiveQueue;
import io.srdma.verbs.VerbsException;
import java.util.Arrays;

/**
 * A shared receive queue of the loopback provider: a {@link LoopbackReceiveQueue#sharedRing} that
 * the queue pairs created with it claim receives from ({@link LoopbackReceiveQueue#claiming}), as
 * the soft provider's does. A post resumes the sends waiting for a receive (receiver not ready) on
 * any of those queue pairs. Thread-safe; a post allocates nothing.
 */
final class LoopbackSharedReceiveQueue implements SharedReceiveQueue {
  private static final LoopbackQueuePair[] NONE = new LoopbackQueuePair[0];

  private final LoopbackProtectionDomain pd;
  private final LoopbackReceiveQueue ring;
  private final int maxSge;

  /** The queue pairs using it (copied on attach and detach, read without a lock by posts). */
  private volatile LoopbackQueuePair[] users = NONE;

  private int reserved;
  private boolean closed;

  LoopbackSharedReceiveQueue(LoopbackProtectionDomain pd, int capacity, int maxSge) {
    this.pd = pd;
    this.maxSge = maxSge;
    this.ring = LoopbackReceiveQueue.sharedRing(capacity, maxSge);
  }

  /** The receives, for {@link LoopbackReceiveQueue#claiming}. */
  LoopbackReceiveQueue ring() {
    return ring;
  }

  LoopbackProtectionDomain pd() {
    return pd;
  }

  /** A queue pair of {@code verb} is about to be created with it; refused once closed. */
  synchronized void reserve(String verb) {
    if (closed) {
      throw new VerbsException(
          VerbsException.Reason.CLOSED, verb, "the shared receive queue is closed");
    }
    reserved++;
  }

  /** The reserved queue pair was created: its peer is resumed by later posts. */
  synchronized void attach(LoopbackQueuePair qp) {
    reserved--;
    LoopbackQueuePair[] u = users;
    LoopbackQueuePair[] bigger = Arrays.copyOf(u, u.length + 1);
    bigger[u.length] = qp;
    users = bigger;
  }

  /** The reserved queue pair was not created after all. */
  synchronized void unreserve() {
    reserved--;
  }

  /** A queue pair using it was closed. */
  synchronized void detach(LoopbackQueuePair qp) {
    LoopbackQueuePair[] u = users;
    for (int i = 0; i < u.length; i++) {
      if (u[i] == qp) {
        LoopbackQueuePair[] smaller = new LoopbackQueuePair[u.length - 1];
        System.arraycopy(u, 0, smaller, 0, i);
        System.arraycopy(u, i + 1, smaller, i, u.length - i - 1);
        users = smaller.length == 0 ? NONE : smaller;
        return;
      }
    }
  }

  @Override
  public ProtectionDomain protectionDomain() {
    return pd;
  }

  @Override
  public int capacity() {
    return ring.capacity();
  }

  @Override
  public int maxSge() {
    return maxSge;
  }

  @Override
  public void postReceive(ReceiveWorkRequest wr) {
    ring.post(wr, maxSge, false);
    for (LoopbackQueuePair qp : users) {
      LoopbackQueuePair p = qp.peer();
      if (p != null) {
        p.kickIfStalled(); // the first to run takes the receive; the others stay stalled
      }
    }
  }

  @Override
  public void close() {
    synchronized (this) {
      if (closed) {
        return;
      }
      int n = users.length + reserved;
      if (n > 0) {
        throw new VerbsException(
            VerbsException.Reason.BUSY,
            "destroy_srq",
            "shared receive queue is used by " + n + " queue pair(s); close them first");
      }
      closed = true;
      ring.close();
    }
    pd.children().remove(LoopbackProtectionDomain.SHARED_RECEIVE_QUEUE);
  }

  @Override
  public String toString() {
    return "LoopbackSharedReceiveQueue{capacity=" + ring.capacity() + ", maxSge=" + maxSge + "}";
  }
}
