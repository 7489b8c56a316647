package io.srdma.host;

import static org.junit.jupiter.api.Assertions.assertTrue;

import io.srdma.channel.Access;
import io.srdma.channel.RemoteGrant;
import io.srdma.channel.SecureRdmaClient;
import java.nio.file.Path;
import java.time.Duration;
import java.util.EnumSet;
import java.util.concurrent.ScheduledThreadPoolExecutor;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

/**
 * A tenant that asks for grants of the longest TTL its role allows and releases each at once: every
 * grant's expiry task is cancelled, and a cancelled task must leave the watchdog's queue then, not
 * at the end of its TTL — else each one holds its grant and session in the host's memory for the
 * TTL (at the grant-request budget's rate, from every session of every tenant: a memory attack).
 */
@Timeout(value = 120, unit = TimeUnit.SECONDS)
class CancelledTaskRetentionTest {
  private static final int GRANTS = 200;

  @TempDir Path dir;

  @Test
  void aReleasedGrantsExpiryLeavesTheWatchdogQueueAtOnce() throws Exception {
    try (ChannelRig rig = new ChannelRig(dir)) {
      SecureRdmaClient c = rig.client("acme", "trainer-1");
      ScheduledThreadPoolExecutor watchdog = (ScheduledThreadPoolExecutor) rig.host.watchdog();
      int before = watchdog.getQueue().size();
      for (int i = 0; i < GRANTS; i++) {
        RemoteGrant g =
            c.grant("kvcache", EnumSet.of(Access.WRITE), 0, 4096, Duration.ofMinutes(10));
        g.release().toCompletableFuture().get(10, TimeUnit.SECONDS);
      }
      int after = watchdog.getQueue().size();
      assertTrue(
          after - before < GRANTS / 10,
          "watchdog tasks queued after "
              + GRANTS
              + " grants released: "
              + (after - before)
              + " (cancelled expiries kept until their TTL)");
      assertTrue(c.isOpen());
    }
  }
}
