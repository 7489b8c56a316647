package io.srdma.verbs.soft;

import io.srdma.verbs.ProtectionDomain;
import io.srdma.verbs.ReceiveWorkRequest;
import io.srdma.verbs.SharedReceiveQueue;
import io.srdma.verbs.VerbsException;

/**
 * A shared receive queue of the soft provider: a {@link ReceiveQueue#sharedRing} that the
 * responders of the queue pairs created with it claim receives from ({@link
 * ReceiveQueue#claiming}).
 */
final class SoftSharedReceiveQueue implements SharedReceiveQueue {
  private final SoftProtectionDomain pd;
  private final ReceiveQueue ring;
  private final int maxSge;
  private int users;
  private boolean closed;

  SoftSharedReceiveQueue(SoftProtectionDomain pd, int capacity, int maxSge) {
    this.pd = pd;
    this.maxSge = maxSge;
    this.ring = ReceiveQueue.sharedRing(capacity, maxSge);
  }

  /** The receives, for {@link ReceiveQueue#claiming}. */
  ReceiveQueue ring() {
    return ring;
  }

  SoftProtectionDomain pd() {
    return pd;
  }

  /** A queue pair of {@code verb} starts using it; refused once closed. */
  synchronized void attach(String verb) {
    if (closed) {
      throw new VerbsException(
          VerbsException.Reason.CLOSED, verb, "the shared receive queue is closed");
    }
    users++;
  }

  /** A queue pair using it was closed. */
  synchronized void detach() {
    users--;
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
  }

  @Override
  public void close() {
    synchronized (this) {
      if (closed) {
        return;
      }
      if (users > 0) {
        throw new VerbsException(
            VerbsException.Reason.BUSY,
            "destroy_srq",
            "shared receive queue is used by " + users + " queue pair(s); close them first");
      }
      closed = true;
      ring.close();
    }
    pd.children().remove(SoftProtectionDomain.SHARED_RECEIVE_QUEUE);
  }

  @Override
  public String toString() {
    return "SoftSharedReceiveQueue{capacity=" + ring.capacity() + ", maxSge=" + maxSge + "}";
  }
}
