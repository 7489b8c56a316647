package io.srdma.host;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.srdma.verbs.AccessFlags;
import io.srdma.verbs.CompletionQueue;
import io.srdma.verbs.DeviceAttributes;
import io.srdma.verbs.DeviceContext;
import io.srdma.verbs.ProtectionDomain;
import io.srdma.verbs.QueuePair;
import io.srdma.verbs.QueuePairAttributes;
import io.srdma.verbs.RdmaProviders;
import io.srdma.verbs.ReceiveWorkRequest;
import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStreamReader;
import java.io.OutputStream;
import java.lang.management.BufferPoolMXBean;
import java.lang.management.ManagementFactory;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import javax.management.ObjectName;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

/**
 * What the host holds per idle session (issue 17: ≤ 64 KiB of heap and direct memory per session,
 * regions and record buffers excluded). The clients run in a JVM of their own ({@link
 * FootprintClients}), so this JVM holds the host side only; the figures are live heap (a class
 * histogram, which collects first) and direct memory ({@code BufferPoolMXBean} "direct") after
 * {@link #SESSIONS} more idle sessions than a warm-up session, divided by their number. The soft
 * provider's share (its queue pair and completion queue as the host creates them, and all the
 * direct memory: its responder's buffers) is measured apart and reported; the host's own share is
 * what remains, and is what {@link #HOST_OWN_BOUND} bounds.
 */
class HostMemoryFootprintTest {
  /** Idle sessions measured ({@code -Dsrdma.test.footprintSessions}). */
  static final int SESSIONS = Integer.getInteger("srdma.test.footprintSessions", 100);

  /**
   * The host's own heap per idle session, the provider's share excluded: half of issue 17's 64 KiB,
   * the other half left to the provider's queue pair (measured 24.2 KiB after session 9's cuts, 202
   * KiB before; docs/performance.md, "Session 9: host memory per session"). The soft provider takes
   * ~80 KiB per session today (its responder's 64 KiB read buffer above all), which is what keeps
   * the total over 64 KiB; that total is reported, not bounded, here.
   */
  static final long HOST_OWN_BOUND = 32 * 1024;

  private static final Pattern ROW = Pattern.compile("^\\s*\\d+:\\s+(\\d+)\\s+(\\d+)\\s+(\\S+)");
  private static final Pattern TOTAL = Pattern.compile("^Total\\s+(\\d+)\\s+(\\d+)");

  @TempDir Path dir;

  /** Live heap by class (instances, bytes) and its total, after a full collection. */
  record Snapshot(long heap, long direct, Map<String, long[]> classes) {}

  static Snapshot snapshot() throws Exception {
    String histogram = "";
    for (int i = 0; i < 2; i++) { // the second after cleaners and references the first freed
      histogram =
          (String)
              ManagementFactory.getPlatformMBeanServer()
                  .invoke(
                      new ObjectName("com.sun.management:type=DiagnosticCommand"),
                      "gcClassHistogram",
                      new Object[] {new String[0]},
                      new String[] {String[].class.getName()});
      Thread.sleep(200);
    }
    Map<String, long[]> classes = new HashMap<>();
    long total = -1;
    for (String line : histogram.split("\n")) {
      Matcher m = ROW.matcher(line);
      if (m.find()) {
        classes.put(
            m.group(3), new long[] {Long.parseLong(m.group(1)), Long.parseLong(m.group(2))});
        continue;
      }
      Matcher t = TOTAL.matcher(line);
      if (t.find()) {
        total = Long.parseLong(t.group(2));
      }
    }
    assertTrue(total > 0, "no total in the class histogram");
    long direct =
        ManagementFactory.getPlatformMXBeans(BufferPoolMXBean.class).stream()
            .filter(b -> b.getName().equals("direct"))
            .mapToLong(BufferPoolMXBean::getMemoryUsed)
            .sum();
    return new Snapshot(total, direct, classes);
  }

  /** The classes that grew most from {@code a} to {@code b}, per {@code n}, one per line. */
  static String growth(Snapshot a, Snapshot b, int n, int rows) {
    List<String[]> out = new ArrayList<>();
    List<Map.Entry<String, long[]>> grew = new ArrayList<>();
    for (Map.Entry<String, long[]> e : b.classes().entrySet()) {
      long[] before = a.classes().getOrDefault(e.getKey(), new long[2]);
      grew.add(
          Map.entry(
              e.getKey(), new long[] {e.getValue()[0] - before[0], e.getValue()[1] - before[1]}));
    }
    grew.sort(Comparator.comparingLong((Map.Entry<String, long[]> e) -> -e.getValue()[1]));
    StringBuilder s = new StringBuilder();
    for (Map.Entry<String, long[]> e : grew.subList(0, Math.min(rows, grew.size()))) {
      s.append(
          String.format(
              "  %-60s %8.1f objects %9.1f B%n",
              e.getKey(), e.getValue()[0] / (double) n, e.getValue()[1] / (double) n));
    }
    return s.toString();
  }

  @Test
  @Timeout(600)
  void shouldHoldLittleMemoryPerIdleSession() throws Exception {
    StringBuilder report = new StringBuilder();
    try (ChannelRig rig =
        new ChannelRig(dir, o -> o.maxSessionsPerTenant(SESSIONS + 8).maxSessions(1024))) {
      Path log = dir.resolve("clients.log");
      Process clients =
          new ProcessBuilder(
                  ProcessHandle.current().info().command().orElse("java"),
                  "-Xmx1g",
                  "-XX:MaxDirectMemorySize=2g",
                  "-cp",
                  System.getProperty("java.class.path"),
                  FootprintClients.class.getName(),
                  dir.resolve("ca").toString(),
                  Integer.toString(rig.host.address().getPort()),
                  Integer.toString(SESSIONS + 1),
                  ChannelRig.PROVIDER)
              .redirectError(log.toFile())
              .start();
      try (BufferedReader out =
              new BufferedReader(
                  new InputStreamReader(clients.getInputStream(), StandardCharsets.UTF_8));
          OutputStream in = clients.getOutputStream()) {
        expect(out, "WARM", log);
        ChannelRig.await(() -> rig.host.sessions().size() == 1, "the warm-up session");
        Thread.sleep(500);
        Snapshot before = snapshot();
        in.write("go\n".getBytes(StandardCharsets.UTF_8));
        in.flush();
        expect(out, "READY", log);
        ChannelRig.await(
            () -> rig.host.sessions().size() == SESSIONS + 1, SESSIONS + 1 + " sessions");
        Thread.sleep(1000); // idle: the last handshakes' messages are taken
        Snapshot after = snapshot();
        double heap = (after.heap() - before.heap()) / (double) SESSIONS;
        double direct = (after.direct() - before.direct()) / (double) SESSIONS;
        double soft = softQueuePairHeap(SESSIONS);
        double own = heap - soft;
        report.append(
            String.format(
                "host memory per idle session (%d sessions, provider %s)%n"
                    + "  heap %.1f B, direct %.1f B, total %.1f B%n"
                    + "  soft provider's share: direct %.1f B + queue pair and completion queue"
                    + " heap %.1f B%n"
                    + "  host's own (heap less soft's): %.1f B (bound %d B)%n"
                    + "heap growth by class, per session:%n%s",
                SESSIONS,
                ChannelRig.PROVIDER,
                heap,
                direct,
                heap + direct,
                direct,
                soft,
                own,
                HOST_OWN_BOUND,
                growth(before, after, SESSIONS, 40)));
        Files.createDirectories(Path.of("target"));
        Files.writeString(Path.of("target", "host-footprint.txt"), report);
        System.out.println(report);
        assertEquals(SESSIONS + 1, rig.host.sessions().size(), "every session still open");
        assertTrue(own <= HOST_OWN_BOUND, report.toString());
      } finally {
        clients.getOutputStream().close();
        if (!clients.waitFor(60, TimeUnit.SECONDS)) {
          clients.destroyForcibly();
        }
      }
    }
  }

  private static void expect(BufferedReader out, String word, Path log) throws IOException {
    String line;
    while ((line = out.readLine()) != null) {
      if (line.startsWith(word)) {
        return;
      }
    }
    throw new AssertionError(
        "the client JVM ended before " + word + ": " + Files.readString(log).strip());
  }

  /**
   * The heap the soft provider takes per session for what the host creates on it (a completion
   * queue of 16 and a queue pair with its receives posted), measured apart on a device of its own.
   */
  private static double softQueuePairHeap(int n) throws Exception {
    if (!ChannelRig.PROVIDER.equals("soft")) {
      return 0;
    }
    try (DeviceContext device =
        RdmaProviders.firstDevice("soft").open(new HostOptions().device())) {
      DeviceAttributes a = device.queryDevice();
      int depth =
          Math.max(1, Math.min(256, Math.min(a.maxQpWr(), Math.min(a.maxCqe(), 1 << 18) / 1024)));
      ProtectionDomain pd = device.allocateProtectionDomain();
      CompletionQueue shared = device.createCompletionQueue(depth * 2);
      List<AutoCloseable> made = new ArrayList<>();
      ReceiveWorkRequest receive = new ReceiveWorkRequest(1);
      Snapshot before = snapshot();
      for (int i = 0; i < n; i++) {
        CompletionQueue cq = device.createCompletionQueue(16);
        QueuePair qp = pd.createQueuePair(new QueuePairAttributes(cq, shared, 16, depth, 1, 1));
        qp.init(AccessFlags.REMOTE_WRITE | AccessFlags.REMOTE_READ);
        for (int r = 0; r < depth; r++) {
          qp.postReceive(receive.wrId(r));
        }
        made.add(cq);
        made.add(qp);
      }
      Snapshot after = snapshot();
      for (int i = made.size() - 1; i >= 0; i--) {
        made.get(i).close();
      }
      shared.close();
      pd.close();
      return (after.heap() - before.heap()) / (double) n;
    }
  }
}
