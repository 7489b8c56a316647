package io.srdma.host;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.srdma.channel.Access;
import io.srdma.channel.AttackProbe;
import io.srdma.channel.RemoteGrant;
import io.srdma.channel.SecureRdmaClient;
import io.srdma.verbs.WcStatus;
import io.srdma.verbs.WrOpcode;
import java.nio.file.Path;
import java.time.Duration;
import java.util.EnumSet;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

/**
 * A grant the host ends (revoke, expiry, reload) may have write notifications under way: its holder
 * kept writing until it heard. Those are refused without opening anything, but they are not the
 * peer's fault: no access-violation line each, no cost to the session's rejection budget (which
 * would end an honest session with REJECTED_RECORDS and count a failure against its address once
 * more than {@code maxRejectedRecords} were in flight, fewer than the receive depth). Only
 * notifications within the receives posted at the end and within {@link GrantSlots#LATE_WINDOW}
 * count as under way; later ones, and any after a RELEASE (its holder drains first), cost as
 * before.
 */
@Timeout(120)
class LateNotificationTest {
  @TempDir Path dir;

  private static int violations(ChannelRig rig, String what) {
    String audit;
    try {
      audit = rig.audit();
    } catch (Exception e) {
      throw new IllegalStateException(e);
    }
    int n = 0;
    for (String line : audit.split("\n")) {
      if (line.contains("\"access_violation\"") && line.contains(what)) {
        n++;
      }
    }
    return n;
  }

  private static void notifyStale(SecureRdmaClient c, int slot) throws Exception {
    assertEquals(
        WcStatus.SUCCESS,
        AttackProbe.post(c, WrOpcode.RDMA_WRITE_WITH_IMM, 0, 0, null, 0, slot << 24));
  }

  @Test
  void shouldRefuseNotificationsUnderWayAtARevokeQuietlyAndLaterOnesAsBefore() throws Exception {
    try (ChannelRig rig = new ChannelRig(dir, o -> o.maxRejectedRecords(16))) {
      SecureRdmaClient acme = rig.client("acme", "trainer-1");
      RemoteGrant g =
          acme.grant("kvcache", EnumSet.of(Access.WRITE), 0, 65536, Duration.ofMinutes(1));
      int slot = AttackProbe.slot(g);
      assertTrue(rig.host.revoke(g.id(), "operator"));
      HostStats before = rig.host.stats();
      // more than the session's whole rejection budget, right after the revoke
      int late = 24;
      for (int i = 0; i < late; i++) {
        notifyStale(acme, slot);
      }
      ChannelRig.await(
          () -> rig.host.stats().staleNotifications() == before.staleNotifications() + late,
          "the late notifications counted");
      assertEquals(1, rig.host.sessions().size(), "the session goes on: nothing was charged");
      assertEquals(0, violations(rig, "no live grant (slot " + slot), "nothing audited");

      // past the window, a notification naming the ended grant costs as before
      Thread.sleep(GrantSlots.LATE_WINDOW.toMillis() + 200);
      notifyStale(acme, slot);
      ChannelRig.await(
          () -> violations(rig, "no live grant (slot " + slot) == 1, "a later one audited");
    }
  }

  @Test
  void shouldChargeANotificationAfterARelease() throws Exception {
    try (ChannelRig rig = new ChannelRig(dir)) {
      SecureRdmaClient acme = rig.client("acme", "trainer-1");
      RemoteGrant g =
          acme.grant("kvcache", EnumSet.of(Access.WRITE), 0, 65536, Duration.ofMinutes(1));
      int slot = AttackProbe.slot(g);
      g.release().toCompletableFuture().get(10, TimeUnit.SECONDS);
      notifyStale(acme, slot);
      ChannelRig.await(
          () -> violations(rig, "no live grant (slot " + slot) == 1,
          "audited at once: a RELEASE drains first, nothing of it is under way");
    }
  }
}
