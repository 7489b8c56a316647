package io.srdma.verbs.ibv;

import io.srdma.verbs.MemoryRegion;
import io.srdma.verbs.ProtectionDomain;
import java.nio.ByteBuffer;

/**
 * Registered memory ({@code struct ibv_mr}); keeps the buffer reachable while registered. Its
 * {@link #address()} is the I/O virtual address it was registered at (random, see {@link
 * IbvProtectionDomain}), not the buffer's process address.
 */
final class IbvMemoryRegion implements MemoryRegion {
  private final IbvProtectionDomain pd;
  private final long mr;
  private final ByteBuffer memory;
  private final long address;
  private final int lkey;
  private final int rkey;
  private final int access;
  private boolean closed;

  IbvMemoryRegion(
      IbvProtectionDomain pd,
      long mr,
      ByteBuffer memory,
      long iova,
      int lkey,
      int rkey,
      int access) {
    this.pd = pd;
    this.mr = mr;
    this.memory = memory;
    this.address = iova;
    this.lkey = lkey;
    this.rkey = rkey;
    this.access = access;
  }

  long handle() {
    return mr;
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
    synchronized (this) {
      if (closed) {
        return;
      }
      int rc = Native.lib().ibv_dereg_mr(mr);
      if (rc != 0) {
        throw Errors.of("dereg_mr", rc, "memory region");
      }
      closed = true;
    }
    pd.children().remove("memory region");
  }
}
