package io.srdma.host;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.srdma.channel.Access;
import io.srdma.channel.RemoteGrant;
import io.srdma.channel.SecureRdmaClient;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.EnumSet;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** The control plane runs on a fixed set of threads, whatever the number of sessions. */
class HostControlPlaneThreadsTest {
  @TempDir Path dir;

  /** Live threads of the host (named {@code srdma-host-<n>-*}). */
  private static int hostThreads() {
    return (int)
        Thread.getAllStackTraces().keySet().stream()
            .filter(Thread::isAlive)
            .filter(t -> t.getName().startsWith("srdma-host-"))
            .count();
  }

  @Test
  void sessionsDoNotAddHostThreads() throws Exception {
    try (ChannelRig rig =
        new ChannelRig(dir, o -> o.controlThreads(2).workerThreads(4).openerThreads(2))) {
      List<SecureRdmaClient> clients = new ArrayList<>();
      for (int i = 0; i < 4; i++) {
        clients.add(rig.client("acme", "trainer-" + i));
      }
      ChannelRig.await(() -> rig.host.sessions().size() == 4, "4 sessions");
      int withFew = hostThreads();
      for (int i = 4; i < 48; i++) {
        clients.add(rig.client("acme", "trainer-" + i));
      }
      ChannelRig.await(() -> rig.host.sessions().size() == 48, "48 sessions");
      // every session still works: one grant and one record each
      int written = 0;
      for (SecureRdmaClient c : clients) {
        RemoteGrant g =
            c.grant("kvcache", EnumSet.of(Access.WRITE), 0, 4096, Duration.ofMinutes(1));
        g.writeBlocking(0, ChannelRig.bytes(64, 1));
        // every client writes the same place: the next one may write only once the host opened
        // this record (a record overwritten by another session's fails to open, as it must)
        int expected = ++written;
        ChannelRig.await(() -> rig.acmeRecords.size() >= expected, expected + " records");
      }
      ChannelRig.await(() -> rig.acmeRecords.size() == 48, "48 records");
      int withMany = hostThreads();
      assertEquals(withFew, withMany, "host threads with 4 and with 48 sessions");
      // 2 loops + 4 workers + 2 openers + timer + watchdog + the connector's one (the clients
      // connect one after another: one thread serves them all)
      assertTrue(withMany <= 11, "host threads: " + withMany);
    }
  }
}
