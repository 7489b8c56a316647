package io.srdma.verbs.soft;

import io.srdma.verbs.AccessFlags;
import io.srdma.verbs.DeviceContext;
import io.srdma.verbs.MemoryRegion;
import io.srdma.verbs.MemoryWindow;
import io.srdma.verbs.ProtectionDomain;
import io.srdma.verbs.QueuePair;
import io.srdma.verbs.QueuePairAttributes;
import io.srdma.verbs.SharedReceiveQueue;
import io.srdma.verbs.VerbsException;
import io.srdma.verbs.internal.LiveChildren;
import java.nio.ByteBuffer;

/** A protection domain of the soft provider. */
final class SoftProtectionDomain implements ProtectionDomain {
  static final String MEMORY_REGION = "memory region";
  static final String MEMORY_WINDOW = "memory window";
  static final String QUEUE_PAIR = "queue pair";
  static final String SHARED_RECEIVE_QUEUE = "shared receive queue";

  private final SoftDeviceContext ctx;
  private final LiveChildren children = new LiveChildren();
  private boolean closed;

  SoftProtectionDomain(SoftDeviceContext ctx) {
    this.ctx = ctx;
  }

  SoftDeviceContext softContext() {
    return ctx;
  }

  LiveChildren children() {
    return children;
  }

  @Override
  public DeviceContext context() {
    return ctx;
  }

  @Override
  public MemoryRegion registerMemory(ByteBuffer buffer, int access) {
    String verb = "reg_mr";
    AccessFlags.validate(verb, access);
    if (buffer == null || !buffer.isDirect()) {
      throw new VerbsException(
          VerbsException.Reason.INVALID_ARGUMENT,
          verb,
          "memory regions need a direct ByteBuffer (ByteBuffer.allocateDirect); got "
              + (buffer == null ? "null" : "a heap buffer"));
    }
    if (buffer.isReadOnly()) {
      throw new VerbsException(VerbsException.Reason.INVALID_ARGUMENT, verb, "buffer is read-only");
    }
    if (AccessFlags.has(access, AccessFlags.REMOTE_WRITE)
        && !AccessFlags.has(access, AccessFlags.LOCAL_WRITE)) {
      throw new VerbsException(
          VerbsException.Reason.INVALID_ARGUMENT,
          verb,
          "REMOTE_WRITE requires LOCAL_WRITE (as in libibverbs)");
    }
    synchronized (this) {
      requireOpen(verb);
      SoftMemoryRegion mr = new SoftMemoryRegion(this, buffer.slice(), ctx.randomAddress(), access);
      children.add(MEMORY_REGION);
      return mr;
    }
  }

  @Override
  public synchronized MemoryWindow allocateMemoryWindow() {
    requireOpen("alloc_mw");
    SoftMemoryWindow mw = new SoftMemoryWindow(this);
    children.add(MEMORY_WINDOW);
    return mw;
  }

  @Override
  public synchronized QueuePair createQueuePair(QueuePairAttributes attributes) {
    String verb = "create_qp";
    requireOpen(verb);
    SoftCompletionQueue send = ctx.ownCq(attributes.sendCq(), verb);
    SoftCompletionQueue recv = ctx.ownCq(attributes.recvCq(), verb);
    int maxWr = SoftDeviceContext.MAX_QP_WR;
    if (attributes.maxSendWr() > maxWr || attributes.maxRecvWr() > maxWr) {
      throw new VerbsException(
          VerbsException.Reason.INVALID_ARGUMENT,
          verb,
          "queue depth above device maximum " + maxWr);
    }
    if (attributes.maxSendSge() > SoftDeviceContext.MAX_SGE
        || attributes.maxRecvSge() > SoftDeviceContext.MAX_SGE) {
      throw new VerbsException(
          VerbsException.Reason.INVALID_ARGUMENT,
          verb,
          "SGEs above device maximum " + SoftDeviceContext.MAX_SGE);
    }
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
    children.add(QUEUE_PAIR);
    return qp;
  }

  @Override
  public synchronized SharedReceiveQueue createSharedReceiveQueue(int capacity, int maxSge) {
    String verb = "create_srq";
    requireOpen(verb);
    if (capacity < 1 || capacity > SoftDeviceContext.MAX_QP_WR) {
      throw new VerbsException(
          VerbsException.Reason.INVALID_ARGUMENT,
          verb,
          "capacity " + capacity + " outside 1.." + SoftDeviceContext.MAX_QP_WR);
    }
    if (maxSge < 1 || maxSge > SoftDeviceContext.MAX_SGE) {
      throw new VerbsException(
          VerbsException.Reason.INVALID_ARGUMENT,
          verb,
          "maxSge " + maxSge + " outside 1.." + SoftDeviceContext.MAX_SGE);
    }
    SoftSharedReceiveQueue srq = new SoftSharedReceiveQueue(this, capacity, maxSge);
    children.add(SHARED_RECEIVE_QUEUE);
    return srq;
  }

  private void requireOpen(String verb) {
    if (closed) {
      throw new VerbsException(VerbsException.Reason.CLOSED, verb, "protection domain is closed");
    }
  }

  @Override
  public synchronized void close() {
    if (closed) {
      return;
    }
    children.requireNone("dealloc_pd", "protection domain");
    closed = true;
    ctx.children().remove(SoftDeviceContext.PROTECTION_DOMAIN);
  }
}
