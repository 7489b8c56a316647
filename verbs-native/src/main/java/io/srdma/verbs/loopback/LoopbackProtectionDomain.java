package io.srdma.verbs.loopback;

import io.srdma.verbs.DeviceContext;
import io.srdma.verbs.MemoryRegion;
import io.srdma.verbs.MemoryWindow;
import io.srdma.verbs.QueuePair;
import io.srdma.verbs.QueuePairAttributes;
import io.srdma.verbs.SharedReceiveQueue;
import io.srdma.verbs.VerbsException;
import io.srdma.verbs.internal.EmulatedProtectionDomain;
import io.srdma.verbs.internal.KeyTable;
import java.nio.ByteBuffer;

/** A protection domain of the loopback provider; the verbs' checks are in the base class. */
final class LoopbackProtectionDomain extends EmulatedProtectionDomain {
  private final LoopbackDeviceContext ctx;

  LoopbackProtectionDomain(LoopbackDeviceContext ctx) {
    super(
        ctx.children(),
        LoopbackDeviceContext.PROTECTION_DOMAIN,
        LoopbackDeviceContext.MAX_QP_WR,
        LoopbackDeviceContext.MAX_SGE,
        ctx.queryDevice().localHeapMemory());
    this.ctx = ctx;
  }

  LoopbackDeviceContext loopbackContext() {
    return ctx;
  }

  @Override
  public KeyTable<Object> lkeys() {
    return ctx.lkeys();
  }

  @Override
  public KeyTable<Object> rkeys() {
    return ctx.rkeys();
  }

  @Override
  public DeviceContext context() {
    return ctx;
  }

  @Override
  protected MemoryRegion newRegion(ByteBuffer memory, int access) {
    return new LoopbackMemoryRegion(this, memory, ctx.randomAddress(), access);
  }

  @Override
  protected MemoryWindow newWindow() {
    return new LoopbackMemoryWindow(this);
  }

  @Override
  protected SharedReceiveQueue newSharedReceiveQueue(int capacity, int maxSge) {
    return new LoopbackSharedReceiveQueue(this, capacity, maxSge);
  }

  @Override
  public synchronized QueuePair createQueuePair(QueuePairAttributes attributes) {
    String verb = "create_qp";
    requireOpen(verb);
    LoopbackCompletionQueue send = ctx.ownCq(attributes.sendCq(), verb);
    LoopbackCompletionQueue recv = ctx.ownCq(attributes.recvCq(), verb);
    checkQueueLimits(attributes, verb);
    LoopbackSharedReceiveQueue srq = null;
    if (attributes.sharedReceiveQueue() != null) {
      if (!(attributes.sharedReceiveQueue() instanceof LoopbackSharedReceiveQueue own)
          || own.pd() != this) {
        throw new VerbsException(
            VerbsException.Reason.INVALID_ARGUMENT,
            verb,
            "the shared receive queue must belong to this protection domain");
      }
      srq = own;
      srq.reserve(verb);
    }
    LoopbackQueuePair qp;
    try {
      qp = new LoopbackQueuePair(this, send, recv, attributes, srq);
    } catch (RuntimeException e) {
      if (srq != null) {
        srq.unreserve();
      }
      throw e;
    }
    if (srq != null) {
      srq.attach(qp);
    }
    children().add(QUEUE_PAIR);
    return qp;
  }
}
