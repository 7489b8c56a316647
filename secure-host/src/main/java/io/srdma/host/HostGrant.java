package io.srdma.host;

import io.srdma.channel.Access;
import io.srdma.channel.SealedLayout;
import io.srdma.channel.record.RecordBinding;
import io.srdma.policy.LiveGrant;
import io.srdma.verbs.MemoryRegion;
import io.srdma.verbs.MemoryWindow;
import java.util.concurrent.ScheduledFuture;

/** A grant as the host holds it: the policy's view, the device object scoping it, its slot. */
final class HostGrant {
  final long id;
  final int slot;
  final LiveGrant live;
  final HostedRegion region;
  final HostSession session;
  final RecordBinding binding;
  final long unit;
  final MemoryWindow window;
  final MemoryRegion scopedRegion;
  final long remoteAddress;
  final int rkey;

  /** Whether the grant allows WRITE: only such a grant's slot may be named by a notification. */
  final boolean writable;

  volatile ScheduledFuture<?> expiry;

  /**
   * Whether the host ended it: written under the slots' lock ({@link GrantSlots#markEnded}), read
   * there or without it ({@link GrantSlots#hasEnded}, the region's readers). Volatile: a read
   * without the lock is a synchronization action as the lock's acquire is, so it sees an end marked
   * before it, never a stale one.
   */
  volatile boolean ended;

  /**
   * Whether its GRANT was written to the holder; set and read under the session's control proxy
   * lock, so an end's REVOKE notice goes out exactly when the holder was told of the grant (an end
   * before the GRANT is answered with GRANT_DENIED instead).
   */
  boolean announced;

  /**
   * When the host ended it (revoke, expiry, reload, session end; not a RELEASE, which drains
   * first): the session's notifications seen by then, and the time ({@link System#nanoTime}); -1
   * while live or after a RELEASE. Set under the slots' lock ({@link GrantSlots#markEnded}).
   */
  long endedAtNotification = -1;

  long endedAtNanos;

  HostGrant(
      long id,
      int slot,
      LiveGrant live,
      HostedRegion region,
      HostSession session,
      MemoryWindow window,
      MemoryRegion scopedRegion,
      long remoteAddress,
      int rkey) {
    this.id = id;
    this.slot = slot;
    this.live = live;
    this.region = region;
    this.session = session;
    this.binding = RecordBinding.of(id, region.tenant(), region.name());
    this.unit = SealedLayout.writeUnit(live.length());
    this.window = window;
    this.scopedRegion = scopedRegion;
    this.remoteAddress = remoteAddress;
    this.rkey = rkey;
    this.writable = live.operations().contains(io.srdma.policy.Operation.WRITE);
  }

  long end() {
    return live.offset() + live.length();
  }

  GrantInfo info() {
    java.util.Set<Access> access = java.util.EnumSet.noneOf(Access.class);
    for (io.srdma.policy.Operation op : live.operations()) {
      access.add(op == io.srdma.policy.Operation.READ ? Access.READ : Access.WRITE);
    }
    return new GrantInfo(
        id,
        session.hexId(),
        live.identity(),
        live.tenant(),
        live.region(),
        live.offset(),
        live.length(),
        access,
        live.issuedAt(),
        live.expiresAt(),
        window != null ? "window" : "region");
  }
}
