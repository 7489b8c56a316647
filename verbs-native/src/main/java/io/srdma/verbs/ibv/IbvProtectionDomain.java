package io.srdma.verbs.ibv;

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
import java.security.SecureRandom;

/**
 * A libibverbs protection domain ({@code struct ibv_pd}).
 *
 * <p>Memory is registered at a random I/O virtual address ({@code ibv_reg_mr_iova2}): the region's
 * {@link MemoryRegion#address()} is that IOVA, used by local SGEs, window binds and remote peers
 * alike, so a peer must guess 44 random address bits besides the R_Key (whose key part rxe draws
 * from only 8 random bits). Without {@code ibv_reg_mr_iova2}, remotely accessible memory is refused
 * unless {@link io.srdma.verbs.DeviceOptions#allowPlainRegionAddresses()}.
 */
final class IbvProtectionDomain implements ProtectionDomain {
  /** IOVA bits drawn at random: 12..55 (page number); the page offset is the buffer's own. */
  static final long IOVA_RANDOM_MASK = 0x00FF_FFFF_FFFF_F000L;

  static final String SHARED_RECEIVE_QUEUE = "shared receive queue";

  private static final SecureRandom RANDOM = new SecureRandom();

  private final IbvDeviceContext context;
  private final long pd;
  private final LiveChildren children = new LiveChildren();
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

  LiveChildren children() {
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
    boolean remote = (access & (AccessFlags.REMOTE_READ | AccessFlags.REMOTE_WRITE)) != 0;
    Native.LibIbverbsIova iovaLib = Native.iova();
    if (iovaLib == null && remote && !context.options().allowPlainRegionAddresses()) {
      throw new VerbsException(
          VerbsException.Reason.NOT_SUPPORTED,
          "reg_mr",
          "this libibverbs does not export ibv_reg_mr_iova2 (symbol version IBVERBS_1.8), so remotely"
              + " accessible memory would be addressed by its process virtual address behind an"
              + " R_Key with as few as 8 random bits; upgrade rdma-core, or accept that with"
              + " DeviceOptions.allowPlainRegionAddresses(true) / -D"
              + io.srdma.verbs.DeviceOptions.ALLOW_PLAIN_REGION_ADDRESSES_PROP_NAME
              + "=true");
    }
    synchronized (this) {
      requireOpen("reg_mr");
      long iova = iovaLib == null ? address : randomIova(address);
      long mr =
          iovaLib == null
              ? Native.lib().ibv_reg_mr(pd, address, length, access)
              : iovaLib.ibv_reg_mr_iova2(pd, address, length, iova, access);
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
          iova,
          Native.getInt(mr + Structs.Mr.LKEY),
          Native.getInt(mr + Structs.Mr.RKEY),
          access);
    }
  }

  /**
   * A random IOVA for memory at {@code address}: random page number (bits 12..55, never page 0),
   * the buffer's own offset inside its page (hardware RNICs map IOVA and address page by page).
   */
  static long randomIova(long address) {
    long page;
    do {
      page = RANDOM.nextLong() & IOVA_RANDOM_MASK;
    } while (page == 0);
    return page | (address & 0xFFFL);
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
    IbvSharedReceiveQueue srq = null;
    if (attributes.sharedReceiveQueue() != null) {
      if (!(attributes.sharedReceiveQueue() instanceof IbvSharedReceiveQueue ibv)
          || ibv.pd() != this) {
        throw new VerbsException(
            VerbsException.Reason.INVALID_ARGUMENT,
            "create_qp",
            "the shared receive queue must belong to this protection domain");
      }
      srq = ibv;
    }
    synchronized (this) {
      requireOpen("create_qp");
      if (srq != null) {
        srq.attach("create_qp");
      }
      IbvQueuePair qp;
      try {
        qp = IbvQueuePair.create(this, send, recv, attributes, srq);
      } catch (RuntimeException e) {
        if (srq != null) {
          srq.detach();
        }
        throw e;
      }
      children.add("queue pair");
      return qp;
    }
  }

  @Override
  public SharedReceiveQueue createSharedReceiveQueue(int capacity, int maxSge) {
    synchronized (this) {
      requireOpen("create_srq");
      IbvSharedReceiveQueue srq = IbvSharedReceiveQueue.create(this, capacity, maxSge);
      children.add(SHARED_RECEIVE_QUEUE);
      return srq;
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
