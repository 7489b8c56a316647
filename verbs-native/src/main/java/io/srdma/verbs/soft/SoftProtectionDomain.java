package io.srdma.verbs.soft;

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

/** A protection domain of the soft provider; the verbs' checks are in the base class. */
final class SoftProtectionDomain extends EmulatedProtectionDomain {
  private final SoftDeviceContext ctx;

  SoftProtectionDomain(SoftDeviceContext ctx) {
    super(
        ctx.children(),
        SoftDeviceContext.PROTECTION_DOMAIN,
        SoftDeviceContext.MAX_QP_WR,
        SoftDeviceContext.MAX_SGE,
        ctx.queryDevice().localHeapMemory());
    this.ctx = ctx;
  }

  SoftDeviceContext softContext() {
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
    return new SoftMemoryRegion(this, memory, ctx.randomAddress(), access);
  }

  @Override
  protected MemoryWindow newWindow() {
    return new SoftMemoryWindow(this);
  }

  @Override
  protected SharedReceiveQueue newSharedReceiveQueue(int capacity, int maxSge) {
    return new SoftSharedReceiveQueue(this, capacity, maxSge);
  }

  @Override
  public synchronized QueuePair createQueuePair(QueuePairAttributes attributes) {
    String verb = "create_qp";
    requireOpen(verb);
    SoftCompletionQueue send = ctx.ownCq(attributes.sendCq(), verb);
    SoftCompletionQueue recv = ctx.ownCq(attributes.recvCq(), verb);
    checkQueueLimits(attributes, verb);
    SoftSharedReceiveQueue srq = null;
    if (attributes.sharedReceiveQueue() != null) {
      if (!(attributes.sharedReceiveQueue() instanceof SoftSharedReceiveQueue soft)
          || soft.pd() != this) {
        throw new VerbsException(
            VerbsException.Reason.INVALID_ARGUMENT,
            verb,
            "the shared receive queue must belong to this protection domain");
      }
      srq = soft;
      srq.attach(verb);
    }
    SoftQueuePair qp;
    try {
      qp = new SoftQueuePair(this, send, recv, attributes, srq);
    } catch (RuntimeException e) {
      if (srq != null) {
        srq.detach();
      }
      throw e;
    }
    children().add(QUEUE_PAIR);
    return qp;
  }
}
