package io.srdma.verbs.internal;

import io.srdma.verbs.AccessFlags;

/**
 * The emulated RNIC's checks on the requester's side, shared by the soft and the loopback provider
 * so each rule is written once: a local SGE's lkey, and a {@code LOCAL_INV}. (A {@code BIND_MW}'s
 * rule is {@link EmulatedMemoryWindow#bind}; a remote access's, {@link RemoteAccess}.) Stateless,
 * thread-safe, allocates nothing. Not API.
 */
public final class LocalAccess {
  private LocalAccess() {}

  /**
   * The region of {@code pd} that {@code lkey} names, if it is open, allows {@code rights} and
   * holds all of {@code [addr, addr+len)}; else null.
   */
  public static <P extends EmulatedProtectionDomain, R extends EmulatedMemoryRegion<P>> R region(
      KeyTable<?> lkeys, Class<R> regionType, P pd, int lkey, long addr, int len, int rights) {
    Object o = lkeys.get(lkey);
    if (!regionType.isInstance(o)) {
      return null;
    }
    R mr = regionType.cast(o);
    if (mr.pd() != pd
        || mr.isClosed()
        || !AccessFlags.has(mr.access(), rights)
        || mr.offsetOf(addr, len) < 0) {
      return null;
    }
    return mr;
  }

  /**
   * {@code LOCAL_INV} of {@code rkey} posted on queue pair {@code qp} of {@code pd}: true when it
   * named a window of that PD whose live binding that QP made under that rkey, now invalidated.
   */
  public static <P extends EmulatedProtectionDomain, W extends EmulatedMemoryWindow<P, ?>>
      boolean invalidate(KeyTable<?> rkeys, Class<W> windowType, P pd, Object qp, int rkey) {
    Object o = rkeys.get(rkey);
    if (!windowType.isInstance(o)) {
      return false;
    }
    W mw = windowType.cast(o);
    return mw.pd() == pd && mw.invalidate(rkey, qp);
  }
}
