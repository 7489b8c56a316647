package io.srdma.verbs.internal;

import io.srdma.verbs.AccessFlags;

/**
 * The emulated RNIC's access check for one incoming RDMA READ or WRITE, shared by the soft and the
 * loopback provider so the rule is written once; and what it resolved for the request being
 * executed: the region and offset of the bytes, and the type-2 window (with the binding it was
 * checked against) when the rkey named one. The check: the QP allows the operation; the rkey
 * exists; the region's or window's PD is the QP's; a window is bound to this very QP (the object,
 * not its number) under this rkey; the rights allow the operation; the region is open; {@code
 * [addr, addr+len)} lies inside the window and the region (unsigned, overflow-safe).
 *
 * <p>A zero-length RDMA READ or WRITE touches no memory, so its R_Key and address are not validated
 * (InfiniBand C9-88), as rxe does; a WRITE_WITH_IMM of zero bytes still consumes a receive. The
 * QP's own remote access rights are checked whatever the length, as rxe does: a QP that does not
 * allow remote writes takes no WRITE_WITH_IMM, not even an empty one (its immediate would reach the
 * application).
 *
 * <p>Resolving is done once, at the request's header; the executing thread then re-checks the
 * window's binding and the region under their access locks before every chunk it moves. Confined to
 * that thread; allocates nothing. Not API.
 *
 * @param <P> the provider's protection domain
 * @param <R> the provider's memory region
 * @param <W> the provider's memory window
 */
public final class RemoteAccess<
    P extends EmulatedProtectionDomain,
    R extends EmulatedMemoryRegion<P>,
    W extends EmulatedMemoryWindow<P, R>> {

  /**
   * What the check needs of the queue pair the request arrived on (the responder's side).
   *
   * @param <P> the provider's protection domain
   */
  public interface Target<P> {
    /** The QP's protection domain. */
    P pd();

    /** The QP's remote access rights ({@link AccessFlags}). */
    int accessFlags();
  }

  private final Class<R> regionType;
  private final Class<W> windowType;
  private R region;
  private long offset;
  private W window;
  private EmulatedMemoryWindow.Binding<R> binding;

  /** A check for one provider's regions and windows (the types its rkey table holds). */
  public RemoteAccess(Class<R> regionType, Class<W> windowType) {
    this.regionType = regionType;
    this.windowType = windowType;
  }

  /**
   * Checks an access of {@code len} bytes at {@code address} under {@code rkey} with {@code right}
   * for {@code qp}, whose context's rkeys are {@code rkeys}; what an earlier call resolved is
   * forgotten first.
   *
   * @return true when allowed: then {@link #region} and {@link #offset} name the bytes (null and 0
   *     for a zero-length access), and {@link #window}/{@link #binding} the window, if any
   */
  public boolean resolve(
      KeyTable<?> rkeys, Target<P> qp, int rkey, long address, int len, int right) {
    clear();
    if (!AccessFlags.has(qp.accessFlags(), right)) {
      return false;
    }
    if (len == 0) {
      return true;
    }
    Object o = rkeys.get(rkey);
    if (regionType.isInstance(o)) {
      R mr = regionType.cast(o);
      if (mr.pd() != qp.pd() || mr.isClosed() || !AccessFlags.has(mr.access(), right)) {
        return false;
      }
      return resolved(mr, mr.offsetOf(address, len));
    }
    if (windowType.isInstance(o)) {
      W mw = windowType.cast(o);
      EmulatedMemoryWindow.Binding<R> b = mw.binding();
      if (b == null
          || b.rkey() != rkey
          || mw.pd() != qp.pd()
          || b.qp() != qp
          || !AccessFlags.has(b.access(), right)
          || b.region().isClosed()
          || EmulatedMemoryRegion.rangeOffset(b.address(), b.length(), address, len) < 0) {
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
  public void clear() {
    region = null;
    offset = 0;
    window = null;
    binding = null;
  }

  /** The resolved region, or null. */
  public R region() {
    return region;
  }

  /** The resolved bytes' offset in {@link #region}. */
  public long offset() {
    return offset;
  }

  /** The window the rkey named, or null when it named the region itself. */
  public W window() {
    return window;
  }

  /** The window's binding the access was checked against, or null. */
  public EmulatedMemoryWindow.Binding<R> binding() {
    return binding;
  }

  private boolean resolved(R mr, long off) {
    if (off < 0) {
      return false;
    }
    region = mr;
    offset = off;
    return true;
  }
}
