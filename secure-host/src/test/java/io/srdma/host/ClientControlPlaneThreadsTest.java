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
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

/**
 * The SDK's control plane is one per process (an event loop, a timer and a few workers), and so are
 * its completion lanes (a completion queue and a poller thread each), whatever the number of
 * clients; they stop with the last client.
 */
class ClientControlPlaneThreadsTest {
  @TempDir Path dir;

  /**
   * Live threads of the shared client control plane ({@code srdma-client-control|timer|worker}).
   */
  private static List<String> controlPlaneThreads() {
    return Thread.getAllStackTraces().keySet().stream()
        .filter(Thread::isAlive)
        .map(Thread::getName)
        .filter(
            n ->
                n.equals("srdma-client-control")
                    || n.equals("srdma-client-timer")
                    || n.startsWith("srdma-client-worker-"))
        .sorted()
        .toList();
  }

  /** Per-client control threads as they were before the shared runtime: there must be none. */
  private static long perClientControlThreads() {
    return Thread.getAllStackTraces().keySet().stream()
        .filter(Thread::isAlive)
        .map(Thread::getName)
        .filter(n -> n.matches("srdma-client-\\d+-(control|timer)"))
        .count();
  }

  /** Per-client completion pollers as they were before the shared lanes: there must be none. */
  private static long perClientPollerThreads() {
    return Thread.getAllStackTraces().keySet().stream()
        .filter(Thread::isAlive)
        .map(Thread::getName)
        .filter(n -> n.matches("srdma-client-\\d+-cq"))
        .count();
  }

  @Test
  @Timeout(value = 180, unit = TimeUnit.SECONDS)
  void clientsShareOneControlPlane() throws Exception {
    // another test's client still open in this JVM would keep the shared threads alive
    boolean aloneAtStart =
        controlPlaneThreads().isEmpty() && ClientCompletionLanesTest.laneThreads().isEmpty();
    try (ChannelRig rig = new ChannelRig(dir)) {
      List<SecureRdmaClient> clients = new ArrayList<>();
      for (int i = 0; i < 4; i++) {
        clients.add(rig.client("acme", "trainer-" + i));
      }
      // workers start on demand: let the first clients' grants run so the count is settled
      for (SecureRdmaClient c : clients) {
        c.grant("kvcache", EnumSet.of(Access.WRITE), 0, 4096, Duration.ofMinutes(1));
      }
      List<String> withFew = controlPlaneThreads();
      for (int i = 4; i < 48; i++) {
        clients.add(rig.client("acme", "trainer-" + i));
      }
      ChannelRig.await(() -> rig.host.sessions().size() == 48, "48 sessions");
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
      try {
        ChannelRig.await(() -> rig.acmeRecords.size() == 48, "48 records");
      } catch (AssertionError e) {
        throw new AssertionError(
            e.getMessage()
                + ": "
                + rig.acmeRecords.size()
                + " records, "
                + rig.host.stats()
                + ", violations: "
                + rig.audit().lines().filter(l -> l.contains("violation")).toList(),
            e);
      }
      List<String> withMany = controlPlaneThreads();
      assertTrue(withMany.contains("srdma-client-control"), "the loop runs: " + withMany);
      assertTrue(withMany.contains("srdma-client-timer"), "the timer runs: " + withMany);
      // an event loop, a timer and at most 4 workers, for 4 clients as for 48
      assertTrue(withMany.size() <= 6, "client control-plane threads: " + withMany);
      assertTrue(withFew.size() <= withMany.size(), withFew + " then " + withMany);
      assertEquals(0, perClientControlThreads(), "no control or timer thread per client");
      // 48 clients' completions on at most 2 lanes: a completion queue and a poller thread each
      List<String> lanes = ClientCompletionLanesTest.laneThreads();
      assertTrue(!lanes.isEmpty() && lanes.size() <= 2, "completion lane threads: " + lanes);
      assertEquals(0, perClientPollerThreads(), "no completion poller per client");
      for (SecureRdmaClient c : clients) {
        c.close();
      }
      if (aloneAtStart) {
        // the last client stops the shared threads (bounded joins)
        ChannelRig.await(() -> controlPlaneThreads().isEmpty(), "client control plane stopped");
        ChannelRig.await(
            () -> ClientCompletionLanesTest.laneThreads().isEmpty(), "completion lanes stopped");
      }
    }
  }
}
