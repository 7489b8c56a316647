package io.srdma.verbs.internal;

import io.srdma.verbs.AccessFlags;
import io.srdma.verbs.MemoryRegion;
import io.srdma.verbs.ProtectionDomain;
import java.nio.ByteBuffer;

/**
 * Registered memory of an emulated provider (soft, loopback): a direct buffer, a random base
 * address and two random keys.
 *
 * <p>The thread that executes a request places (and sends) bytes of this region only while holding
 * {@link #accessLock()} and after checking {@link #isClosed()} under it; {@link #close()} sets the
 * flag under the same lock, so once {@code close()} returns no byte is placed in or read from this
 * region any more (docs/data-plane.md, "Revocation: what is guaranteed"). Thread-safe. Not API.
 *
 * @param <P> the provider's protection domain
 */
public abstract class EmulatedMemoryRegion<P extends EmulatedProtectionDomain>
    implements MemoryRegion {
  private final Object accessLock = new Object();
  private final P pd;
  private final ByteBuffer memory;
  private final long address;
  private final int access;
  private final int lkey;
  private final int rkey;
  private volatile boolean closed;

  protected EmulatedMemoryRegion(P pd, ByteBuffer memory, long address, int access) {
    this.pd = pd;
    this.memory = memory;
    this.address = address;
    this.access = access;
    this.lkey = pd.lkeys().allocate(this);
    this.rkey = pd.rkeys().allocate(this);
  }

  /** The domain this region belongs to. */
  public final P pd() {
    return pd;
  }

  /** The registered bytes; callers use absolute access or their own views only. */
  public final ByteBuffer memory() {
    return memory;
  }

  public final boolean isClosed() {
    return closed;
  }

  /** The lock under which the executing thread checks {@link #isClosed()} and moves bytes. */
  public final Object accessLock() {
    return accessLock;
  }

  /**
   * Offset of {@code [addr, addr+len)} inside this region, or -1 when any byte lies outside.
   * Overflow-safe: works in unsigned arithmetic and never computes {@code addr + len}.
   */
  public final long offsetOf(long addr, long len) {
    return rangeOffset(address, memory.capacity(), addr, len);
  }

  /** Offset of {@code [addr, addr+len)} inside {@code [base, base+size)}, or -1. */
  public static long rangeOffset(long base, long size, long addr, long len) {
    if (len < 0 || Long.compareUnsigned(addr, base) < 0) {
      return -1;
    }
    long offset = addr - base;
    if (Long.compareUnsigned(offset, size) > 0 || Long.compareUnsigned(len, size - offset) > 0) {
      return -1;
    }
    return offset;
  }

  @Override
  public final ProtectionDomain protectionDomain() {
    return pd;
  }

  @Override
  public final long address() {
    return address;
  }

  @Override
  public final long length() {
    return memory.capacity();
  }

  @Override
  public final int lkey() {
    return lkey;
  }

  @Override
  public final int rkey() {
    return rkey;
  }

  @Override
  public final int access() {
    return access;
  }

  @Override
  public final ByteBuffer buffer() {
    return memory.duplicate().clear();
  }

  @Override
  public final void close() {
    synchronized (accessLock) {
      if (closed) {
        return;
      }
      closed = true;
    }
    pd.lkeys().remove(lkey, this);
    pd.rkeys().remove(rkey, this);
    pd.children().remove(EmulatedProtectionDomain.MEMORY_REGION);
  }

  @Override
  public final String toString() {
    return getClass().getSimpleName()
        + "{length="
        + memory.capacity()
        + ", access="
        + AccessFlags.toString(access)
        + "}";
  }
}
