package io.srdma.verbs.loopback;

import io.srdma.verbs.AccessFlags;
import io.srdma.verbs.MemoryRegion;
import io.srdma.verbs.ProtectionDomain;
import java.nio.ByteBuffer;

/**
 * Registered memory of the loopback provider: a direct buffer, a random base address and two keys.
 *
 * <p>The thread executing a request places (and sends) bytes of this region only while holding
 * {@link #accessLock()} and after checking {@link #isClosed()} under it; {@link #close()} sets the
 * flag under the same lock, so once {@code close()} returns no byte is placed in or read from this
 * region any more (docs/data-plane.md, "Revocation: what is guaranteed").
 */
final class LoopbackMemoryRegion implements MemoryRegion {
  private final Object accessLock = new Object();
  private final LoopbackProtectionDomain pd;
  private final ByteBuffer memory;
  private final long address;
  private final int access;
  private final int lkey;
  private final int rkey;
  private volatile boolean closed;

  LoopbackMemoryRegion(LoopbackProtectionDomain pd, ByteBuffer memory, long address, int access) {
    this.pd = pd;
    this.memory = memory;
    this.address = address;
    this.access = access;
    LoopbackDeviceContext ctx = pd.loopbackContext();
    this.lkey = ctx.lkeys().allocate(this);
    this.rkey = ctx.rkeys().allocate(this);
  }

  LoopbackProtectionDomain pd() {
    return pd;
  }

  /** The registered bytes; callers use absolute access or their own views only. */
  ByteBuffer memory() {
    return memory;
  }

  boolean isClosed() {
    return closed;
  }

  /** The lock under which the executing thread checks {@link #isClosed()} and moves bytes. */
  Object accessLock() {
    return accessLock;
  }

  /**
   * Offset of {@code [addr, addr+len)} inside this region, or -1 when any byte lies outside.
   * Overflow-safe: works in unsigned arithmetic and never computes {@code addr + len}.
   */
  long offsetOf(long addr, long len) {
    return rangeOffset(address, memory.capacity(), addr, len);
  }

  /** Offset of {@code [addr, addr+len)} inside {@code [base, base+size)}, or -1. */
  static long rangeOffset(long base, long size, long addr, long len) {
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
  public ProtectionDomain protectionDomain() {
    return pd;
  }

  @Override
  public long address() {
    return address;
  }

  @Override
  public long length() {
    return memory.capacity();
  }

  @Override
  public int lkey() {
    return lkey;
  }

  @Override
  public int rkey() {
    return rkey;
  }

  @Override
  public int access() {
    return access;
  }

  @Override
  public ByteBuffer buffer() {
    return memory.duplicate().clear();
  }

  @Override
  public void close() {
    synchronized (accessLock) {
      if (closed) {
        return;
      }
      closed = true;
    }
    LoopbackDeviceContext ctx = pd.loopbackContext();
    ctx.lkeys().remove(lkey, this);
    ctx.rkeys().remove(rkey, this);
    pd.children().remove(LoopbackProtectionDomain.MEMORY_REGION);
  }

  @Override
  public String toString() {
    return "LoopbackMemoryRegion{length="
        + memory.capacity()
        + ", access="
        + AccessFlags.toString(access)
        + "}";
  }
}
