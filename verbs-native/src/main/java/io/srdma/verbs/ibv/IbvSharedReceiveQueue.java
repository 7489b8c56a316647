package io.srdma.verbs.ibv;

import io.srdma.verbs.ProtectionDomain;
import io.srdma.verbs.ReceiveWorkRequest;
import io.srdma.verbs.SharedReceiveQueue;
import io.srdma.verbs.VerbsException;

/**
 * A libibverbs shared receive queue ({@code struct ibv_srq}). Receives are posted through {@code
 * context->ops.post_srq_recv} (the static inline {@code ibv_post_srq_recv}) from one off-heap
 * request block, under its lock.
 */
final class IbvSharedReceiveQueue implements SharedReceiveQueue {
  private final IbvProtectionDomain pd;
  private final long srq;
  private final int capacity;
  private final int maxSge;
  private final RecvRequestBlock recvBlock;
  private int users;
  private volatile boolean closed;

  private IbvSharedReceiveQueue(IbvProtectionDomain pd, long srq, int capacity, int maxSge) {
    this.pd = pd;
    this.srq = srq;
    this.capacity = capacity;
    this.maxSge = maxSge;
    this.recvBlock = new RecvRequestBlock(maxSge, "post_srq_recv");
  }

  /** {@code ibv_create_srq}; the caller holds the PD's lock. */
  static IbvSharedReceiveQueue create(IbvProtectionDomain pd, int capacity, int maxSge) {
    String verb = "create_srq";
    if (capacity < 1 || maxSge < 1) {
      throw new VerbsException(
          VerbsException.Reason.INVALID_ARGUMENT,
          verb,
          "capacity and maxSge must be >= 1, got " + capacity + " and " + maxSge);
    }
    if (!pd.ibvContext().ops().hasPostSrqRecv()) {
      throw new VerbsException(
          VerbsException.Reason.NOT_SUPPORTED,
          verb,
          "the device's ops table has no post_srq_recv: it has no shared receive queues");
    }
    long init = Native.allocate(Structs.SrqInitAttr.SIZE);
    try {
      Native.putInt(init + Structs.SrqInitAttr.MAX_WR, capacity);
      Native.putInt(init + Structs.SrqInitAttr.MAX_SGE, maxSge);
      long srq = Native.lib().ibv_create_srq(pd.handle(), init);
      if (srq == 0) {
        int errno = Native.lastError();
        throw Errors.of(
            verb, errno, "shared receive queue of " + capacity + " x " + maxSge + " SGEs");
      }
      try {
        LayoutProbe.require(
            Native.getLong(srq + Structs.Srq.CONTEXT) == pd.ibvContext().handle()
                && Native.getLong(srq + Structs.Srq.PD) == pd.handle(),
            "ibv_srq",
            "srq->context, srq->pd");
      } catch (VerbsException e) {
        Native.lib().ibv_destroy_srq(srq);
        throw e;
      }
      // libibverbs writes back what the device granted (rxe rounds up to 2^n - 1)
      int granted = Native.getInt(init + Structs.SrqInitAttr.MAX_WR);
      return new IbvSharedReceiveQueue(pd, srq, Math.max(capacity, granted), maxSge);
    } finally {
      Native.free(init);
    }
  }

  long handle() {
    return srq;
  }

  IbvProtectionDomain pd() {
    return pd;
  }

  /** A queue pair starts using it; refused once closed. */
  synchronized void attach(String verb) {
    if (closed) {
      throw new VerbsException(
          VerbsException.Reason.CLOSED, verb, "the shared receive queue is closed");
    }
    users++;
  }

  /** A queue pair using it was destroyed. */
  synchronized void detach() {
    users--;
  }

  @Override
  public ProtectionDomain protectionDomain() {
    return pd;
  }

  @Override
  public int capacity() {
    return capacity;
  }

  @Override
  public int maxSge() {
    return maxSge;
  }

  @Override
  public void postReceive(ReceiveWorkRequest wr) {
    synchronized (recvBlock) {
      if (closed) {
        throw new VerbsException(
            VerbsException.Reason.CLOSED, "post_srq_recv", "shared receive queue is closed");
      }
      recvBlock.encode(wr);
      // providers return the errno with either sign (rxe: -ENOMEM for a full queue)
      int rc =
          Math.abs(
              pd.ibvContext().ops().postSrqRecv(srq, recvBlock.wr(), recvBlock.badWrPointer()));
      if (rc != 0) {
        throw rc == Errors.ENOMEM
            ? new VerbsException(
                VerbsException.Reason.RESOURCE_EXHAUSTED,
                "post_srq_recv",
                "shared receive queue full (" + capacity + ")")
            : Errors.of("post_srq_recv", rc, "shared receive queue");
      }
    }
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
      synchronized (recvBlock) {
        int rc = Native.lib().ibv_destroy_srq(srq);
        if (rc != 0) {
          throw Errors.of("destroy_srq", rc, "shared receive queue");
        }
        closed = true;
        recvBlock.close();
      }
    }
    pd.children().remove(IbvProtectionDomain.SHARED_RECEIVE_QUEUE);
  }

  @Override
  public String toString() {
    return "ibv shared receive queue (capacity " + capacity + ", " + maxSge + " SGEs)";
  }
}
