package io.srdma.host;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.srdma.channel.protocol.Frame;
import io.srdma.channel.protocol.MessageType;
import io.srdma.channel.protocol.Operations;
import java.lang.reflect.Field;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ScheduledThreadPoolExecutor;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

/**
 * An operator revokes a grant the host has listed but whose GRANT has not gone out yet (its issuing
 * worker is between the listing and the GRANT). The holder is answered GRANT_DENIED, and is never
 * sent a REVOKE for a grant it does not know (docs/protocol.md, GRANT).
 */
@Timeout(value = 60, unit = TimeUnit.SECONDS)
class RevokeWhileIssuingTest {
  @TempDir Path dir;

  /** The host's grant table, holding up the worker just after it listed the first grant. */
  private static final class PausingGrantTable extends ConcurrentHashMap<Long, HostGrant> {
    final transient CountDownLatch listed = new CountDownLatch(1);
    final transient CountDownLatch resume = new CountDownLatch(1);
    transient volatile HostGrant paused;

    @Override
    public HostGrant put(Long id, HostGrant g) {
      HostGrant before = super.put(id, g);
      if (paused == null) {
        paused = g;
        listed.countDown();
        try {
          resume.await(30, TimeUnit.SECONDS);
        } catch (InterruptedException e) {
          Thread.currentThread().interrupt();
        }
      }
      return before;
    }
  }

  @Test
  void aGrantRevokedBeforeItsGrantWentOutIsDeniedWithoutARevokeNotice() throws Exception {
    try (ChannelRig rig = new ChannelRig(dir);
        RawPeer raw = new RawPeer(rig, "acme", "trainer-1")) {
      PausingGrantTable table = new PausingGrantTable();
      Field tables = RegionHost.class.getDeclaredField("tables");
      tables.setAccessible(true);
      Field grants = HostTables.class.getDeclaredField("grants");
      grants.setAccessible(true);
      grants.set(tables.get(rig.host), table);

      ScheduledThreadPoolExecutor watchdog = (ScheduledThreadPoolExecutor) rig.host.watchdog();
      int queued = watchdog.getQueue().size();
      raw.proxy.grantRequest(7, "kvcache", Operations.WRITE, 0, 4096, 60_000);
      long id;
      try {
        assertTrue(table.listed.await(10, TimeUnit.SECONDS), "the grant was listed");
        id = table.paused.id;
        assertTrue(rig.host.revoke(id, "operator"), "a listed grant can be revoked");
      } finally {
        table.resume.countDown();
      }
      List<String> seen = new ArrayList<>();
      while (true) {
        Frame f = raw.reader.read();
        seen.add(f.type() + (f.type() == MessageType.REVOKE ? " " + f.revoke().grantId() : ""));
        assertTrue(
            f.type() != MessageType.REVOKE || f.revoke().grantId() != id,
            "a REVOKE for grant " + id + " that was never sent to the peer: " + seen);
        assertTrue(f.type() != MessageType.GRANT, "the revoked grant was issued: " + seen);
        if (f.type() == MessageType.GRANT_DENIED) {
          assertEquals(7, f.requestId(), seen.toString());
          break;
        }
      }
      assertEquals(
          queued,
          watchdog.getQueue().size(),
          "the ended grant's expiry task is not left to hold it until its TTL");
      // the session carries on: the next request is served
      raw.proxy.grantRequest(8, "kvcache", Operations.WRITE, 0, 4096, 60_000);
      Frame next = raw.reader.read();
      while (next.type() != MessageType.GRANT && next.type() != MessageType.GRANT_DENIED) {
        next = raw.reader.read();
      }
      assertEquals(MessageType.GRANT, next.type());
    }
  }
}
