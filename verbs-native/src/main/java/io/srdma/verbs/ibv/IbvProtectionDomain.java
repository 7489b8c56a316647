package io.srdma.verbs.ibv;

import io.srdma.verbs.AccessFlags;
import io.srdma.verbs.DeviceContext;
import io.srdma.verbs.MemoryRegion;
import io.srdma.verbs.MemoryWindow;
import io.srdma.verbs.ProtectionDomain;
import io.srdma.verbs.QueuePair;
import io.srdma.verbs.QueuePairAttributes;
import io.srdma.verbs.VerbsException;
import java.nio.ByteBuffer;

/** A libibverbs protection domain ({@code struct ibv_pd}). */
final class IbvProtectionDomain implements ProtectionDomain {
  private final IbvDeviceContext context;
  private final long pd;
  private final Children children = new Children();
  private boolean closed;

  IbvProtectionDomain(IbvDeviceContext context, long pd) {
    this.context = context;
    this.pd = pd;
  }

  long handle() {
    return pd;
  }

  IbvDeviceContext ibvContext() {
    return context;
  }

  Children children() {
    return children;
  }

  private void requireOpen(String verb) {
    if (closed) {
      throw new VerbsException(VerbsException.Reason.CLOSED, verb, "protection domain is closed");
    }
  }

  @Override
  public DeviceContext context() {
    return context;
  }

  @Override
  public MemoryRegion registerMemory(ByteBuffer buffer, int access) {
    AccessFlags.validate("reg_mr", access);
    if (!buffer.isDirect()) {
      throw new VerbsException(
          VerbsException.Reason.INVALID_ARGUMENT,
          "reg_mr",
          "memory must be a direct ByteBuffer (ByteBuffer.allocateDirect), not a heap buffer");
    }
    if (buffer.isReadOnly()) {
      throw new VerbsException(
          VerbsException.Reason.INVALID_ARGUMENT, "reg_mr", "the buffer is read-only");
    }
    if (AccessFlags.has(access, AccessFlags.REMOTE_WRITE)
        && !AccessFlags.has(access, AccessFlags.LOCAL_WRITE)) {
      throw new VerbsException(
          VerbsException.Reason.INVALID_ARGUMENT, "reg_mr", "REMOTE_WRITE needs LOCAL_WRITE");
    }
    ByteBuffer view = buffer.slice(buffer.position(), buffer.remaining());
    long address = Native.MEMORY.getDirectBufferAddress(view);
    long length = view.capacity();
    synchronized (this) {
      requireOpen("reg_mr");
      long mr = Native.lib().ibv_reg_mr(pd, address, length, access);
      if (mr == 0) {
        int errno = Native.lastError();
        String hint =
            errno == Errors.ENOMEM || errno == Errors.EPERM || errno == Errors.EAGAIN
                ? " (is the locked-memory limit too low? 'ulimit -l unlimited')"
                : "";
        throw Errors.of("reg_mr", errno, length + " bytes" + hint);
      }
      LayoutProbe.require(
          Native.getLong(mr + Structs.Mr.ADDR) == address
              && Native.getLong(mr + Structs.Mr.LENGTH) == length
              && Native.getLong(mr + Structs.Mr.PD) == pd,
          "ibv_mr",
          "mr->addr, mr->length, mr->pd");
      children.add("memory region");
      return new IbvMemoryRegion(
          this,
          mr,
          view,
          Native.getInt(mr + Structs.Mr.LKEY),
          Native.getInt(mr + Structs.Mr.RKEY),
          access);
    }
  }

  @Override
  public MemoryWindow allocateMemoryWindow() {
    synchronized (this) {
      requireOpen("alloc_mw");
      long mw = context.ops().allocMwType2(pd);
      LayoutProbe.require(
          Native.getLong(mw + Structs.Mw.PD) == pd
              && Native.getInt(mw + Structs.Mw.TYPE) == Structs.Mw.TYPE_2,
          "ibv_mw",
          "mw->pd, mw->type");
      children.add("memory window");
      return new IbvMemoryWindow(this, mw, Native.getInt(mw + Structs.Mw.RKEY));
    }
  }

  @Override
  public QueuePair createQueuePair(QueuePairAttributes attributes) {
    if (!(attributes.sendCq() instanceof IbvCompletionQueue send)
        || !(attributes.recvCq() instanceof IbvCompletionQueue recv)
        || send.ibvContext() != context
        || recv.ibvContext() != context) {
      throw new VerbsException(
          VerbsException.Reason.INVALID_ARGUMENT,
          "create_qp",
          "the completion queues must be ibv queues of the same device context");
    }
    synchronized (this) {
      requireOpen("create_qp");
      IbvQueuePair qp = IbvQueuePair.create(this, send, recv, attributes);
      children.add("queue pair");
      return qp;
    }
  }

  @Override
  public void close() {
    synchronized (this) {
      if (closed) {
        return;
      }
      children.requireNone("dealloc_pd", "protection domain");
      int rc = Native.lib().ibv_dealloc_pd(pd);
      if (rc != 0) {
        throw Errors.of("dealloc_pd", rc, "protection domain");
      }
      closed = true;
    }
    context.children().remove("protection domain");
  }
}
