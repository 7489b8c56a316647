package io.srdma.verbs.internal;

import io.srdma.verbs.AccessFlags;
import io.srdma.verbs.MemoryRegion;
import io.srdma.verbs.MemoryWindow;
import io.srdma.verbs.ProtectionDomain;
import io.srdma.verbs.QueuePairAttributes;
import io.srdma.verbs.SharedReceiveQueue;
import io.srdma.verbs.VerbsException;
import java.nio.ByteBuffer;

/**
 * What the soft and loopback providers' protection domains share: argument checks of the verbs, the
 * children's bookkeeping and the close rule (BUSY while children are open). Subclasses make the
 * provider's objects. Verbs are synchronized on the domain. Not API.
 */
public abstract class EmulatedProtectionDomain implements ProtectionDomain {
  public static final String MEMORY_REGION = "memory region";
  public static final String MEMORY_WINDOW = "memory window";
  public static final String QUEUE_PAIR = "queue pair";
  public static final String SHARED_RECEIVE_QUEUE = "shared receive queue";

  private final LiveChildren children = new LiveChildren();
  private final LiveChildren contextChildren;
  private final String kindInContext;
  private final int maxWr;
  private final int maxSge;
  private final boolean localHeapMemory;
  private boolean closed;

  /**
   * @param contextChildren the device context's children, where this domain is counted as {@code
   *     kindInContext}
   * @param maxWr the device's largest queue depth
   * @param maxSge the device's most scatter/gather elements per request
   * @param localHeapMemory whether heap buffers may be registered as memory without remote rights
   *     or MW_BIND ({@code DeviceAttributes.localHeapMemory})
   */
  protected EmulatedProtectionDomain(
      LiveChildren contextChildren,
      String kindInContext,
      int maxWr,
      int maxSge,
      boolean localHeapMemory) {
    this.contextChildren = contextChildren;
    this.kindInContext = kindInContext;
    this.maxWr = maxWr;
    this.maxSge = maxSge;
    this.localHeapMemory = localHeapMemory;
  }

  /** The device's local keys. */
  public abstract KeyTable<Object> lkeys();

  /** The device's remote keys (regions and bound windows). */
  public abstract KeyTable<Object> rkeys();

  /** The open children of this domain. */
  public final LiveChildren children() {
    return children;
  }

  /** A new region over {@code memory} (a slice the caller made); the domain is open and locked. */
  protected abstract MemoryRegion newRegion(ByteBuffer memory, int access);

  /** A new unbound window; the domain is open and locked. */
  protected abstract MemoryWindow newWindow();

  /** A new shared receive queue with checked arguments; the domain is open and locked. */
  protected abstract SharedReceiveQueue newSharedReceiveQueue(int capacity, int maxSge);

  @Override
  public final MemoryRegion registerMemory(ByteBuffer buffer, int access) {
    String verb = "reg_mr";
    AccessFlags.validate(verb, access);
    if (buffer == null) {
      throw new VerbsException(
          VerbsException.Reason.INVALID_ARGUMENT,
          verb,
          "memory regions need a direct ByteBuffer (ByteBuffer.allocateDirect); got null");
    }
    if (!buffer.isDirect() && !(localHeapMemory && isLocalOnly(access))) {
      throw new VerbsException(
          VerbsException.Reason.INVALID_ARGUMENT,
          verb,
          localHeapMemory
              ? "a heap buffer may be registered only without remote rights or MW_BIND; memory"
                  + " others access needs a direct ByteBuffer (ByteBuffer.allocateDirect)"
              : "memory regions need a direct ByteBuffer (ByteBuffer.allocateDirect); got a heap"
                  + " buffer");
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
      MemoryRegion mr = newRegion(buffer.slice(), access);
      children.add(MEMORY_REGION);
      return mr;
    }
  }

  private static boolean isLocalOnly(int access) {
    return (access & (AccessFlags.REMOTE_WRITE | AccessFlags.REMOTE_READ | AccessFlags.MW_BIND))
        == 0;
  }

  @Override
  public final synchronized MemoryWindow allocateMemoryWindow() {
    requireOpen("alloc_mw");
    MemoryWindow mw = newWindow();
    children.add(MEMORY_WINDOW);
    return mw;
  }

  @Override
  public final synchronized SharedReceiveQueue createSharedReceiveQueue(int capacity, int sges) {
    String verb = "create_srq";
    requireOpen(verb);
    if (capacity < 1 || capacity > maxWr) {
      throw new VerbsException(
          VerbsException.Reason.INVALID_ARGUMENT,
          verb,
          "capacity " + capacity + " outside 1.." + maxWr);
    }
    if (sges < 1 || sges > maxSge) {
      throw new VerbsException(
          VerbsException.Reason.INVALID_ARGUMENT, verb, "maxSge " + sges + " outside 1.." + maxSge);
    }
    SharedReceiveQueue srq = newSharedReceiveQueue(capacity, sges);
    children.add(SHARED_RECEIVE_QUEUE);
    return srq;
  }

  /** Checks the queue pair's depths and SGE counts against the device's maximums. */
  protected final void checkQueueLimits(QueuePairAttributes attributes, String verb) {
    if (attributes.maxSendWr() > maxWr || attributes.maxRecvWr() > maxWr) {
      throw new VerbsException(
          VerbsException.Reason.INVALID_ARGUMENT,
          verb,
          "queue depth above device maximum " + maxWr);
    }
    if (attributes.maxSendSge() > maxSge || attributes.maxRecvSge() > maxSge) {
      throw new VerbsException(
          VerbsException.Reason.INVALID_ARGUMENT, verb, "SGEs above device maximum " + maxSge);
    }
  }

  /** Throws CLOSED when the domain was deallocated; call holding the domain's lock. */
  protected final void requireOpen(String verb) {
    if (closed) {
      throw new VerbsException(VerbsException.Reason.CLOSED, verb, "protection domain is closed");
    }
  }

  @Override
  public final synchronized void close() {
    if (closed) {
      return;
    }
    children.requireNone("dealloc_pd", "protection domain");
    closed = true;
    contextChildren.remove(kindInContext);
  }
}
