package io.srdma.host;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.srdma.channel.Access;
import io.srdma.channel.ChannelException;
import io.srdma.channel.RemoteGrant;
import io.srdma.channel.SecureRdmaClient;
import io.srdma.keys.DeploymentCa;
import io.srdma.keys.PeerIdentity;
import io.srdma.policy.AuditLog;
import io.srdma.policy.AuditTrail;
import io.srdma.policy.PolicyLoader;
import java.nio.ByteBuffer;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.EnumSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.function.Supplier;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The host's opener threads: each session's records are opened and delivered on one opener thread
 * (the listener runs there), in order, and sessions spread over the openers.
 */
class HostOpenerThreadsTest {
  private static final String OPENER_NAME = "srdma-host-\\d+-opener-\\d+";
  private static final int STRIDE = 128;

  @TempDir Path dir;

  /** What the listener saw: who wrote, the sequence number in the payload, the calling thread. */
  private record Seen(String identity, long sequence, String thread) {}

  private static void listen(ChannelRig rig, List<Seen> seen) {
    rig.acmeKv.onRecord(
        r -> {
          ByteBuffer p = r.payload();
          seen.add(
              new Seen(r.identity(), p.getLong(p.position()), Thread.currentThread().getName()));
        });
  }

  private static ByteBuffer record(long sequence) {
    ByteBuffer b = ByteBuffer.allocate(16);
    b.putLong(0, sequence).putLong(8, ~sequence);
    return b;
  }

  /** Each of {@code clients} writes {@code n} numbered records into its own range, all at once. */
  private static void writeConcurrently(List<SecureRdmaClient> clients, int n) throws Exception {
    long span = ChannelRig.REGION_SIZE / clients.size();
    ExecutorService writers = Executors.newFixedThreadPool(clients.size());
    try {
      List<Future<?>> done = new ArrayList<>();
      for (int c = 0; c < clients.size(); c++) {
        SecureRdmaClient client = clients.get(c);
        long base = c * span;
        done.add(
            writers.submit(
                () -> {
                  RemoteGrant g =
                      client.grant(
                          "kvcache", EnumSet.of(Access.WRITE), base, span, Duration.ofMinutes(1));
                  for (int i = 0; i < n; i++) {
                    g.writeBlocking((long) i * STRIDE, record(i));
                  }
                  return null;
                }));
      }
      for (Future<?> f : done) {
        f.get(ChannelRig.scaled(Duration.ofSeconds(60)).toMillis(), TimeUnit.MILLISECONDS);
      }
    } finally {
      writers.shutdownNow();
    }
  }

  @Test
  void recordsOfTwoSessionsOnTwoOpenersAreBothDeliveredOnOpenerThreads() throws Exception {
    try (ChannelRig rig = new ChannelRig(dir, o -> o.openerThreads(2))) {
      List<Seen> seen = new CopyOnWriteArrayList<>();
      listen(rig, seen);
      SecureRdmaClient a = rig.client("acme", "trainer-1");
      SecureRdmaClient b = rig.client("acme", "trainer-2");
      assertArrayEquals(new int[] {1, 1}, rig.host.openerLoads(), "one session per opener");
      writeConcurrently(List.of(a, b), 20);
      ChannelRig.await(() -> seen.size() == 40, "40 records delivered");
      Map<String, Set<String>> threads = threadsBySession(seen);
      assertEquals(Set.of(a.identity(), b.identity()), threads.keySet());
      String ta = only(threads.get(a.identity()));
      String tb = only(threads.get(b.identity()));
      assertTrue(ta.matches(OPENER_NAME), ta);
      assertTrue(tb.matches(OPENER_NAME), tb);
      assertNotEquals(ta, tb, "two sessions, two openers");
    }
  }

  @Test
  void eachSessionsRecordsStayOnOneOpenerInOrderUnderLoad() throws Exception {
    int sessions = 4;
    int n = 150;
    try (ChannelRig rig = new ChannelRig(dir, o -> o.openerThreads(2))) {
      List<Seen> seen = new CopyOnWriteArrayList<>();
      listen(rig, seen);
      List<SecureRdmaClient> clients = new ArrayList<>();
      for (int i = 1; i <= sessions; i++) {
        clients.add(rig.client("acme", "trainer-" + i));
      }
      assertArrayEquals(new int[] {2, 2}, rig.host.openerLoads(), "least loaded first");
      writeConcurrently(clients, n);
      ChannelRig.await(() -> seen.size() == sessions * n, "every record delivered");

      Map<String, Set<String>> threads = threadsBySession(seen);
      assertEquals(sessions, threads.size());
      Map<String, Integer> perThread = new ConcurrentHashMap<>();
      for (Map.Entry<String, Set<String>> e : threads.entrySet()) {
        String t = only(e.getValue()); // never split across openers
        assertTrue(t.matches(OPENER_NAME), t);
        perThread.merge(t, 1, Integer::sum);
      }
      assertEquals(List.of(2, 2), List.copyOf(perThread.values()), "two sessions per opener");
      for (SecureRdmaClient c : clients) {
        List<Long> order =
            seen.stream()
                .filter(s -> s.identity().equals(c.identity()))
                .map(Seen::sequence)
                .toList();
        List<Long> expected = new ArrayList<>();
        for (long i = 0; i < n; i++) {
          expected.add(i);
        }
        assertEquals(expected, order, "records of " + c.identity() + " in order");
      }
      HostStats stats = rig.host.stats();
      assertEquals(sessions * n, stats.recordsOpened());
      assertEquals(sessions * n * 16L, stats.bytesOpened());
      assertEquals(0, stats.recordsRejected());
      assertEquals(sessions, stats.sessions());
      assertEquals(sessions, stats.liveGrants());
      long perSession = rig.host.sessions().stream().mapToLong(SessionInfo::recordsIn).sum();
      assertEquals(sessions * n, perSession);
    }
  }

  @Test
  void aSessionThatEndsFreesItsOpenerForTheNext() throws Exception {
    try (ChannelRig rig = new ChannelRig(dir, o -> o.openerThreads(2))) {
      SecureRdmaClient a = rig.client("acme", "trainer-1");
      rig.client("acme", "trainer-2");
      a.close();
      ChannelRig.await(
          () -> java.util.Arrays.stream(rig.host.openerLoads()).sum() == 1, "a's opener freed");
      rig.client("acme", "trainer-3");
      assertArrayEquals(new int[] {1, 1}, rig.host.openerLoads());
    }
  }

  @Test
  void oneOpenerServesEverySession() throws Exception {
    try (ChannelRig rig = new ChannelRig(dir, o -> o.openerThreads(1))) {
      List<Seen> seen = new CopyOnWriteArrayList<>();
      listen(rig, seen);
      SecureRdmaClient a = rig.client("acme", "trainer-1");
      SecureRdmaClient b = rig.client("acme", "trainer-2");
      writeConcurrently(List.of(a, b), 10);
      ChannelRig.await(() -> seen.size() == 20, "20 records delivered");
      assertEquals(1, seen.stream().map(Seen::thread).distinct().count());
    }
  }

  @Test
  void openerThreadsOutOfRangeAreRefused() throws Exception {
    DeploymentCa ca = DeploymentCa.init(dir.resolve("ca"), null);
    try (AuditLog log = AuditLog.open(dir.resolve("audit.jsonl"))) {
      Supplier<HostOptions> valid =
          () ->
              new HostOptions()
                  .credential(
                      ca.issuePeer(
                          PeerIdentity.of(RegionHost.HOST_TENANT, "h"), Duration.ofDays(1)))
                  .trust(ca.trust())
                  .policy(new PolicyLoader().loadSample())
                  .audit(new AuditTrail(log));
      valid.get().check();
      valid.get().openerThreads(1).check();
      valid.get().openerThreads(HostOptions.MAX_OPENER_THREADS).check();
      for (int bad : new int[] {0, -1, HostOptions.MAX_OPENER_THREADS + 1}) {
        ChannelException e =
            assertThrows(ChannelException.class, () -> valid.get().openerThreads(bad).check());
        assertEquals(ChannelException.Reason.INVALID_ARGUMENT, e.reason());
        assertTrue(e.getMessage().contains("openerThreads"), e.getMessage());
        assertThrows(
            ChannelException.class, () -> RegionHost.start(valid.get().openerThreads(bad)));
      }
      assertTrue(valid.get().openerThreads() >= 1, "the default is at least one thread");
    }
  }

  private static Map<String, Set<String>> threadsBySession(List<Seen> seen) {
    Map<String, Set<String>> out = new ConcurrentHashMap<>();
    for (Seen s : seen) {
      out.computeIfAbsent(s.identity(), k -> ConcurrentHashMap.newKeySet()).add(s.thread());
    }
    return out;
  }

  private static String only(Set<String> threads) {
    assertEquals(1, threads.size(), "one thread, got " + threads);
    return threads.iterator().next();
  }
}
