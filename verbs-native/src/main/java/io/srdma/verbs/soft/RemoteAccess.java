package io.srdma.verbs.soft;

import io.srdma.verbs.AccessFlags;
import io.srdma.verbs.internal.KeyTable;

/**
 * The RNIC access check of one {@link Responder}, and what it resolved for the request being
 * executed: the region and offset of the bytes, and the type-2 window (with the binding it was
 * checked against) when the rkey named one. The check: the QP allows the operation; the rkey
 * exists; the region's or window's PD is the QP's; a window is bound to this QP under this rkey;
 * the rights allow the operation; the region is open; {@code [addr, addr+len)} lies inside the
 * window and the region (unsigned, overflow-safe).
 *
 * <p>A zero-length RDMA READ or WRITE touches no memory, so its R_Key and address are not validated
 * (InfiniBand C9-88), as rxe does; a WRITE_WITH_IMM of zero bytes still consumes a receive. The
 * QP's own remote access rights are checked whatever the length, as rxe does: a QP that does not
 * allow remote writes takes no WRITE_WITH_IMM, not even an empty one (its immediate would reach the
 * application).
 *
 * <p>Resolving is done once, at the request's header; the responder re-checks the window's binding
 * and the region under their access locks before every chunk it moves. Confined to the responder's
 * loop thread; allocates nothing.
 */
final class RemoteAccess {
  private final KeyTable<Object> rkeys;
  private SoftMemoryRegion region;
  private long offset;
  private SoftMemoryWindow window;
  private SoftMemoryWindow.Binding<SoftMemoryRegion> binding;

  RemoteAccess(KeyTable<Object> rkeys) {
    this.rkeys = rkeys;
  }

  /**
   * Checks an access of {@code len} bytes at {@code address} under {@code rkey} with {@code right}
   * for {@code qp}; what an earlier call resolved is forgotten first.
   *
   * @return true when allowed: then {@link #region} and {@link #offset} name the bytes (null and 0
   *     for a zero-length access), and {@link #window}/{@link #binding} the window, if any
   */
  boolean resolve(SoftQueuePair qp, int rkey, long address, int len, int right) {
    clear();
    if (!AccessFlags.has(qp.accessFlags(), right)) {
      return false;
    }
    if (len == 0) {
      return true;
    }
    Object o = rkeys.get(rkey);
    if (o instanceof SoftMemoryRegion mr) {
      if (mr.pd() != qp.pd() || mr.isClosed() || !AccessFlags.has(mr.access(), right)) {
        return false;
      }
      return resolved(mr, mr.offsetOf(address, len));
    }
    if (o instanceof SoftMemoryWindow mw) {
      SoftMemoryWindow.Binding<SoftMemoryRegion> b = mw.binding();
      if (b == null
          || b.rkey() != rkey
          || mw.pd() != qp.pd()
          || b.qpn() != qp.qpn()
          || !AccessFlags.has(b.access(), right)
          || b.region().isClosed()
          || SoftMemoryRegion.rangeOffset(b.address(), b.length(), address, len) < 0) {
        return false;
      }
      if (!resolved(b.region(), b.region().offsetOf(address, len))) {
        return false;
      }
      window = mw;
      binding = b;
      return true;
    }
    return false;
  }

  /** Forgets what was resolved (the request is done): no reference to a region or window stays. */
  void clear() {
    region = null;
    offset = 0;
    window = null;
    binding = null;
  }

  /** The resolved region, or null. */
  SoftMemoryRegion region() {
    return region;
  }

  /** The resolved bytes' offset in {@link #region}. */
  long offset() {
    return offset;
  }

  /** The window the rkey named, or null when it named the region itself. */
  SoftMemoryWindow window() {
    return window;
  }

  /** The window's binding the access was checked against, or null. */
  SoftMemoryWindow.Binding<SoftMemoryRegion> binding() {
    return binding;
  }

  private boolean resolved(SoftMemoryRegion mr, long off) {
    if (off < 0) {
      return false;
    }
    region = mr;
    offset = off;
    return true;
  }
}
