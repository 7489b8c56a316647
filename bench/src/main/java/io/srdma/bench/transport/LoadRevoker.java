package io.srdma.bench.transport;

import io.srdma.channel.Access;
import io.srdma.channel.ChannelException;
import io.srdma.channel.RemoteGrant;
import java.nio.ByteBuffer;
import java.util.EnumSet;
import java.util.SplittableRandom;
import java.util.concurrent.CompletionException;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.TimeUnit;

/**
 * The revoker of a {@link LoadRun}: takes a grant out of a session's rotation, waits until the host
 * opened every record written under it, revokes it, checks that the holder is told and that a write
 * on it is refused with {@code REVOKED}, then asks for a replacement; every tenth cycle it also
 * asks for a grant outside the region, which must be denied.
 */
final class LoadRevoker {
  private final LoadRun run;

  LoadRevoker(LoadRun run) {
    this.run = run;
  }

  /** Runs until the load run stops; one revocation every {@code 1 / revocationsPerSecond}. */
  void run() {
    if (run.config.revocationsPerSecond() <= 0) {
      return;
    }
    SplittableRandom random = new SplittableRandom(42);
    long interval = (long) (1e9 / run.config.revocationsPerSecond());
    long next = System.nanoTime();
    long cycles = 0;
    while (run.running.get()) {
      next += interval;
      long wait = next - System.nanoTime();
      if (wait > 0) {
        try {
          TimeUnit.NANOSECONDS.sleep(wait);
        } catch (InterruptedException e) {
          return;
        }
      }
      if (!run.running.get()) {
        return;
      }
      LoadSession s = run.sessions[random.nextInt(run.sessions.length)];
      if (s.failed) {
        continue;
      }
      try {
        revokeOne(s, random);
        if (++cycles % 10 == 0) {
          denyOne(s);
        }
      } catch (RuntimeException e) {
        run.error("revoker:" + e.getClass().getSimpleName());
      }
    }
  }

  private void revokeOne(LoadSession s, SplittableRandom random) {
    LoadSession.Slot slot;
    synchronized (s) {
      if (s.active.size() < 2) {
        return;
      }
      slot = s.active.remove(random.nextInt(s.active.size()));
    }
    long lastSeq = slot.lastSeq;
    if (!LoadRun.await(() -> slot.outstanding.get() == 0 && s.delivered.get() > lastSeq)) {
      run.error("revoke:drain-timeout");
      return;
    }
    RemoteGrant g = slot.grant;
    if (!run.host.revoke(g.id(), "load")) {
      run.error("revoke:not-live");
      return;
    }
    run.revocations.incrementAndGet();
    if (!LoadRun.await(() -> g.endedBecause() != null)) {
      run.error("revoke:holder-not-told");
      return;
    }
    if (!"REVOKED".equals(g.endedBecause())) {
      run.error("revoke:ended-" + g.endedBecause());
    }
    try {
      g.write(0, ByteBuffer.allocate(run.config.recordSize())).toCompletableFuture().join();
      run.error("revoke:write-accepted");
    } catch (CompletionException e) {
      if (LoadRun.reason(e) == ChannelException.Reason.REVOKED) {
        run.refusedRevokedWrites.incrementAndGet();
      } else {
        run.error("revoke:write-" + LoadRun.reason(e));
      }
    }
    try {
      slot.grant =
          s.client.grant(
              "data", EnumSet.of(Access.WRITE), slot.offset, run.config.grantLength(), LoadRun.TTL);
    } catch (ChannelException e) {
      run.error("regrant:" + e.reason());
      return;
    }
    synchronized (s) {
      s.active.add(slot);
    }
    s.kick();
  }

  private void denyOne(LoadSession s) {
    try {
      RemoteGrant g =
          s.client.grant(
              "data",
              EnumSet.of(Access.WRITE),
              LoadRun.REGION_BYTES,
              run.config.grantLength(),
              LoadRun.TTL);
      run.error("deny:granted");
      CompletionStage<Void> unused = g.release();
    } catch (ChannelException e) {
      if (e.reason() == ChannelException.Reason.GRANT_DENIED) {
        run.intendedDenials.incrementAndGet();
      } else {
        run.error("deny:" + e.reason());
      }
    }
  }
}
