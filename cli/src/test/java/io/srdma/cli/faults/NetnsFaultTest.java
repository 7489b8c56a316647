package io.srdma.cli.faults;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.srdma.keys.DeploymentCa;
import io.srdma.keys.PeerIdentity;
import java.io.File;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Set;
import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.TimeUnit;
import java.util.function.BooleanSupplier;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Assumptions;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

/**
 * Multi-host faults (docs/faults.md): a region host ({@link FaultHost}) in one network namespace,
 * tenant writers ({@link FaultWriter}) in another, joined by a veth pair on 10.213.7.0/24, each a
 * separate JVM started with {@code ip netns exec}. The host is killed and restarted, a client is
 * killed, the link is cut and restored, and (where the kernel has sch_netem) the link loses and
 * delays packets. Promises checked: no operation outlives its deadline or ends without a typed
 * {@code ChannelException}; no record is accepted twice or in part; a grant of a dead host is dead
 * after its restart; another tenant's session is not disturbed.
 *
 * <p>Needs root and {@code ip netns} (iproute2); skips saying so otherwise, or fails with {@code
 * -Dsrdma.test.requireNetem=true} (the Soft-RoCE guest: there the netem case must run). Timeouts
 * and deadlines scale with {@code -Dsrdma.test.timeScale=N} ({@link FaultWriter#TIME_SCALE}). The
 * namespaces are removed after each test, also when it fails.
 */
@Timeout(value = 300, unit = TimeUnit.SECONDS)
class NetnsFaultTest {
  private static final String HOST_IP = "10.213.7.1";
  private static final String CLIENT_IP = "10.213.7.2";
  private static final int PORT = 7471;

  /** Where netns or tc netem is missing, fail instead of skipping. */
  private static final boolean REQUIRE_NETEM = Boolean.getBoolean("srdma.test.requireNetem");

  @TempDir Path dir;

  private String hostNs;
  private String clientNs;
  private String clientIf;
  private final List<Process> processes = new ArrayList<>();

  @BeforeEach
  void setUp() throws Exception {
    need(
        "root".equals(System.getProperty("user.name")),
        "NETNS SKIP: needs root for ip netns (user is " + System.getProperty("user.name") + ")");
    String id = Integer.toString(ThreadLocalRandom.current().nextInt(1 << 20), 36);
    hostNs = "srdma-fh-" + id;
    clientNs = "srdma-fc-" + id;
    String hostIf = "sfh" + id;
    clientIf = "sfc" + id;
    Result add = sh("ip", "netns", "add", hostNs);
    need(add.rc == 0, "NETNS SKIP: ip netns add failed: " + add.out.trim());
    must("ip", "netns", "add", clientNs);
    must(
        "ip", "link", "add", hostIf, "netns", hostNs, "type", "veth", "peer", "name", clientIf,
        "netns", clientNs);
    must("ip", "-n", hostNs, "addr", "add", HOST_IP + "/24", "dev", hostIf);
    must("ip", "-n", clientNs, "addr", "add", CLIENT_IP + "/24", "dev", clientIf);
    for (String[] nsIf : new String[][] {{hostNs, hostIf}, {clientNs, clientIf}}) {
      must("ip", "-n", nsIf[0], "link", "set", "lo", "up");
      must("ip", "-n", nsIf[0], "link", "set", nsIf[1], "up");
    }

    DeploymentCa ca = DeploymentCa.init(dir.resolve("ca"), null);
    Files.createDirectories(dir.resolve("certs"));
    ca.issuePeer(PeerIdentity.of("host", "fault-host"), Duration.ofDays(1))
        .writeTo(dir.resolve("certs/host.crt"), dir.resolve("certs/host.key"), null);
    for (String[] p : new String[][] {{"acme", "trainer-1"}, {"globex", "loader-1"}}) {
      ca.issuePeer(PeerIdentity.of(p[0], p[1]), Duration.ofDays(1))
          .writeTo(
              dir.resolve("certs/" + p[1] + ".crt"), dir.resolve("certs/" + p[1] + ".key"), null);
    }
  }

  @AfterEach
  void tearDown() throws Exception {
    for (Process p : processes) {
      p.descendants().forEach(ProcessHandle::destroyForcibly);
      p.destroyForcibly();
      p.waitFor(10, TimeUnit.SECONDS);
    }
    for (String ns : new String[] {hostNs, clientNs}) {
      if (ns != null) {
        sh("ip", "netns", "del", ns); // removes the veth end in it too
      }
    }
  }

  // ------------------------------------------------------------------------------------ cases

  @Test
  void hostKilledAndRestartedMidWrite() throws Exception {
    Process host = startHost(1);
    Path w = startWriter(clientNs, "acme", "trainer-1", "kvcache", "A", 60);
    waitFor(
        "30 records at the host",
        scaled(Duration.ofSeconds(90)),
        () -> records(1, "A").size() >= 30);
    host.destroyForcibly();
    assertTrue(host.waitFor(10, TimeUnit.SECONDS));
    Thread.sleep(1500);
    Process host2 = startHost(2);
    waitFor(
        "the writer reconnected and wrote 20 records",
        scaled(Duration.ofSeconds(90)),
        () -> countAfterConnect(w, 2) >= 20);
    stopWriter("A");
    waitExit(w);
    List<Long> okAfter = okAfterConnect(lines(w), 2);
    awaitRecords(2, "A", okAfter);
    host2.destroyForcibly();

    List<String> lines = lines(w);
    checkOperations(lines);
    assertTrue(
        lines.stream().anyMatch(l -> l.startsWith("OP ") && l.contains(" FAIL ")),
        "the kill must have failed some write: " + lines);
    assertNoRefusal(lines);
    List<String> probes = lines.stream().filter(l -> l.startsWith("PROBE ")).toList();
    assertFalse(probes.isEmpty(), "no probe with the old grant: " + lines);
    for (String p : probes) {
      assertFalse(p.endsWith(" SUCCESS"), "a grant of the dead host worked after restart: " + p);
    }
    checkRecords(List.of(hostOut(1), hostOut(2)), "A");
  }

  @Test
  void clientKilledMidWriteOtherTenantUndisturbed() throws Exception {
    Process host = startHost(1);
    Path a = startWriter(clientNs, "acme", "trainer-1", "kvcache", "A", 60);
    Path g = startWriter(hostNs, "globex", "loader-1", "features", "G", 100);
    waitFor(
        "30 acme and 30 globex records",
        scaled(Duration.ofSeconds(90)),
        () -> records(1, "A").size() >= 30 && records(1, "G").size() >= 30);
    Process writerA = writerProcess(a);
    writerA.destroyForcibly();
    assertTrue(writerA.waitFor(10, TimeUnit.SECONDS));
    waitFor(
        "the host ended acme's session",
        scaled(Duration.ofSeconds(15)),
        () -> lastSessions(1).contains("globex=1") && !lastSessions(1).contains("acme="));
    int before = records(1, "G").size();
    waitFor(
        "30 more globex records",
        scaled(Duration.ofSeconds(30)),
        () -> records(1, "G").size() >= before + 30);
    stopWriter("G");
    waitExit(g);
    // a new acme client is served as before
    Path a2 = startWriter(clientNs, "acme", "trainer-1", "kvcache", "B", 4);
    waitExit(a2);
    assertTrue(host.isAlive(), "the host died");

    checkOperations(lines(a)); // cut short by the kill: what it printed is still well-formed
    List<String> gl = lines(g);
    checkOperations(gl);
    assertUndisturbed(gl);
    List<String> bl = lines(a2);
    checkOperations(bl);
    assertUndisturbed(bl);
    checkRecords(List.of(hostOut(1)), "A");
    awaitRecords(1, "G", okAfterConnect(gl, 1));
    awaitRecords(1, "B", okAfterConnect(bl, 1));
    checkRecords(List.of(hostOut(1)), "G");
    checkRecords(List.of(hostOut(1)), "B");
  }

  @Test
  void linkCutAndRestored() throws Exception {
    startHost(1);
    Path a = startWriter(clientNs, "acme", "trainer-1", "kvcache", "A", 60);
    Path g = startWriter(hostNs, "globex", "loader-1", "features", "G", 100);
    waitFor(
        "20 acme and 20 globex records",
        scaled(Duration.ofSeconds(90)),
        () -> records(1, "A").size() >= 20 && records(1, "G").size() >= 20);
    must("ip", "-n", clientNs, "link", "set", clientIf, "down");
    Thread.sleep(FaultWriter.DEADLINE.toMillis() + 2000);
    must("ip", "-n", clientNs, "link", "set", clientIf, "up");
    waitFor(
        "the writer reconnected and wrote 20 records",
        scaled(Duration.ofSeconds(90)),
        () -> countAfterConnect(a, 2) >= 20);
    stopWriter("G");
    stopWriter("A");
    waitExit(g);
    waitExit(a);

    List<String> al = lines(a);
    checkOperations(al);
    assertTrue(
        al.stream().anyMatch(l -> l.startsWith("OP ") && l.contains(" FAIL ")),
        "the cut must have failed some write: " + al);
    assertNoRefusal(al);
    List<String> gl = lines(g);
    checkOperations(gl);
    assertUndisturbed(gl);
    awaitRecords(1, "A", okAfterConnect(al, 2));
    awaitRecords(1, "G", okAfterConnect(gl, 1));
    checkRecords(List.of(hostOut(1)), "A");
    checkRecords(List.of(hostOut(1)), "G");
  }

  @Test
  void lossyAndSlowLink() throws Exception {
    Result netem =
        sh(
            "ip", "netns", "exec", clientNs, "tc", "qdisc", "add", "dev", clientIf, "root", "netem",
            "delay", "20ms", "5ms", "loss", "3%");
    need(
        netem.rc == 0,
        "NETEM SKIP: tc netem is not available here: '"
            + netem.out.trim()
            + "' (the kernel lacks sch_netem); this case runs where sch_netem exists");
    startHost(1);
    Path a = startWriter(clientNs, "acme", "trainer-1", "kvcache", "A", 15);
    waitExit(a);
    System.out.println(
        "netem: "
            + sh("ip", "netns", "exec", clientNs, "tc", "-s", "qdisc", "show", "dev", clientIf)
                .out
                .replaceAll("\\s+", " ")
                .trim());
    List<String> al = lines(a);
    checkOperations(al);
    assertTrue(
        al.stream().anyMatch(l -> l.startsWith("OP ") && l.contains(" OK ")),
        "nothing went through a lossy link: " + al);
    assertNoRefusal(al);
    List<Long> ok = new ArrayList<>();
    for (int c = 1; al.contains("CONNECTED " + c); c++) {
      ok.addAll(okAfterConnect(al, c));
    }
    awaitRecords(1, "A", ok);
    checkRecords(List.of(hostOut(1)), "A");
  }

  // --------------------------------------------------------------------------------- checks

  /**
   * Every operation ended with OK or a typed failure within the deadline; connects and closes too.
   */
  private static void checkOperations(List<String> lines) {
    long limit = FaultWriter.DEADLINE.toMillis();
    long ok = lines.stream().filter(l -> l.startsWith("OP ") && l.contains(" OK ")).count();
    long maxMs =
        lines.stream()
            .filter(l -> l.startsWith("OP "))
            .mapToLong(l -> Long.parseLong(l.substring(l.lastIndexOf(' ') + 1)))
            .max()
            .orElse(0);
    System.out.println(
        "writer: "
            + ok
            + " OK, slowest operation "
            + maxMs
            + " ms, other lines: "
            + lines.stream()
                .filter(l -> !(l.startsWith("OP ") && l.contains(" OK ")))
                .limit(40)
                .toList());
    for (String l : lines) {
      String[] f = l.split(" ");
      switch (f[0]) {
        case "OP" -> {
          assertTrue(f[2].equals("OK") || f[2].equals("FAIL"), "no definite typed outcome: " + l);
          assertTrue(Long.parseLong(f[f.length - 1]) <= limit, "past the deadline: " + l);
        }
        case "CONNECT_FAIL", "GRANT_FAIL", "CLOSED" ->
            assertTrue(Long.parseLong(f[f.length - 1]) <= limit, "past the deadline: " + l);
        default -> {}
      }
    }
    Set<String> seen = new HashSet<>();
    for (String l : lines) {
      if (l.startsWith("OP ")) {
        assertTrue(seen.add(l.split(" ")[1]), "two outcomes for one write: " + l);
      }
    }
  }

  /**
   * A broken or lossy path is reported as such ({@code TRANSPORT_FAILED}, or the session's end),
   * never as the target refusing an access ({@code REMOTE_ACCESS_ERROR}, a security event).
   */
  private static void assertNoRefusal(List<String> lines) {
    for (String l : lines) {
      assertFalse(
          l.startsWith("OP ") && l.contains(" FAIL REMOTE_ACCESS_ERROR "),
          "a network fault reported as a refused access: " + l);
    }
  }

  /** One connection, every write OK, the end reached. */
  private static void assertUndisturbed(List<String> lines) {
    assertEquals(
        1, lines.stream().filter(l -> l.startsWith("CONNECTED ")).count(), lines.toString());
    assertTrue(
        lines.stream().filter(l -> l.startsWith("OP ")).allMatch(l -> l.contains(" OK ")),
        "a write of the undisturbed tenant failed: " + lines);
    assertTrue(lines.stream().filter(l -> l.startsWith("OP ")).count() >= 10, lines.toString());
    assertTrue(lines.get(lines.size() - 1).startsWith("END "), lines.toString());
  }

  /** The sequence numbers of {@code tag} at the hosts: each at most once, each whole. */
  private static Set<Long> checkRecords(List<Path> hostOutputs, String tag) throws IOException {
    Set<Long> seqs = new HashSet<>();
    for (Path p : hostOutputs) {
      for (String l : Files.readAllLines(p, StandardCharsets.UTF_8)) {
        if (!l.startsWith("REC ")) {
          continue;
        }
        assertFalse(l.endsWith(" BAD"), "a record accepted in part or garbled: " + l);
        String[] f = l.split(" ");
        if (f[1].equals(tag)) {
          assertTrue(seqs.add(Long.parseLong(f[2])), "a record accepted twice: " + l);
        }
      }
    }
    return seqs;
  }

  /**
   * Every write the writer was told went through (OK) is opened by the host incarnation within 10
   * s, scaled (the host opens records after the RDMA completion, asynchronously).
   */
  private void awaitRecords(int incarnation, String tag, List<Long> ok)
      throws InterruptedException {
    long end = System.nanoTime() + scaled(Duration.ofSeconds(10)).toNanos();
    List<Long> missing;
    do {
      Set<Long> at = records(incarnation, tag);
      missing = ok.stream().filter(s -> !at.contains(s)).toList();
      if (missing.isEmpty()) {
        return;
      }
      Thread.sleep(200);
    } while (System.nanoTime() < end);
    throw new AssertionError(
        "writes of "
            + tag
            + " reported OK but never opened by host "
            + incarnation
            + ": "
            + missing
            + " (of "
            + ok.size()
            + " OK writes)");
  }

  private static List<Long> okAfterConnect(List<String> lines, int connection) {
    List<Long> ok = new ArrayList<>();
    boolean after = false;
    for (String l : lines) {
      if (l.equals("CONNECTED " + connection)) {
        after = true;
      } else if (after && l.startsWith("OP ") && l.contains(" OK ")) {
        ok.add(Long.parseLong(l.split(" ")[1]));
      }
    }
    return ok;
  }

  private int countAfterConnect(Path writerOut, int connection) {
    try {
      return okAfterConnect(lines(writerOut), connection).size();
    } catch (IOException e) {
      return 0;
    }
  }

  private Set<Long> records(int incarnation, String tag) {
    Set<Long> s = new HashSet<>();
    try {
      for (String l : Files.readAllLines(hostOut(incarnation), StandardCharsets.UTF_8)) {
        String[] f = l.split(" ");
        if (f[0].equals("REC") && f[1].equals(tag)) {
          s.add(Long.parseLong(f[2]));
        }
      }
    } catch (IOException e) {
      // not yet written
    }
    return s;
  }

  private String lastSessions(int incarnation) {
    String last = "";
    try {
      for (String l : Files.readAllLines(hostOut(incarnation), StandardCharsets.UTF_8)) {
        if (l.startsWith("SESSIONS ")) {
          last = l;
        }
      }
    } catch (IOException e) {
      // not yet written
    }
    return last;
  }

  // ------------------------------------------------------------------------------ processes

  private Path hostOut(int incarnation) {
    return dir.resolve("host-" + incarnation + ".out");
  }

  private Process startHost(int incarnation) throws Exception {
    Process p =
        java(
            hostNs,
            HOST_IP,
            hostOut(incarnation),
            FaultHost.class.getName(),
            dir.toString(),
            HOST_IP,
            Integer.toString(PORT),
            Integer.toString(incarnation));
    waitFor(
        "host " + incarnation + " ready",
        scaled(Duration.ofSeconds(90)),
        () -> {
          try {
            return Files.readString(hostOut(incarnation)).contains("READY ");
          } catch (IOException e) {
            return false;
          }
        });
    return p;
  }

  private final List<Path> writers = new ArrayList<>();
  private final List<Process> writerProcesses = new ArrayList<>();

  private Path startWriter(
      String ns, String tenant, String peer, String region, String tag, int seconds)
      throws IOException {
    Path out = dir.resolve("writer-" + tag + ".out");
    String bind = ns.equals(hostNs) ? HOST_IP : CLIENT_IP;
    writerProcesses.add(
        java(
            ns,
            bind,
            out,
            FaultWriter.class.getName(),
            dir.toString(),
            HOST_IP + ":" + PORT,
            tenant,
            peer,
            region,
            tag,
            Integer.toString(seconds),
            stopFile(tag).toString()));
    writers.add(out);
    return out;
  }

  private Process writerProcess(Path out) {
    return writerProcesses.get(writers.indexOf(out));
  }

  private Path stopFile(String tag) {
    return dir.resolve("stop-" + tag);
  }

  private void stopWriter(String tag) throws IOException {
    Files.writeString(stopFile(tag), "stop");
  }

  private void waitExit(Path writerOut) throws Exception {
    Process p = writerProcess(writerOut);
    long start = System.nanoTime();
    assertTrue(
        p.waitFor(scaled(Duration.ofSeconds(60)).toSeconds(), TimeUnit.SECONDS),
        "writer " + writerOut + " did not end");
    System.out.println(
        "waited "
            + TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - start)
            + " ms for the end of "
            + writerOut.getFileName());
  }

  private Process java(String ns, String bindAddress, Path out, String... mainAndArgs)
      throws IOException {
    List<String> cmd = new ArrayList<>();
    cmd.addAll(List.of("ip", "netns", "exec", ns));
    cmd.add(Path.of(System.getProperty("java.home"), "bin", "java").toString());
    cmd.addAll(
        List.of(
            "-cp",
            System.getProperty("java.class.path"),
            "-Xmx256m",
            "-XX:+UseSerialGC",
            "-XX:TieredStopAtLevel=1",
            "-Dsrdma.soft.bindAddress=" + bindAddress,
            "-Dsrdma.verbs.transportTimeoutMs=" + FaultWriter.REQUEST_TIMEOUT.toMillis(),
            "-Dsrdma.test.timeScale=" + FaultWriter.TIME_SCALE));
    cmd.addAll(List.of(mainAndArgs));
    Process p =
        new ProcessBuilder(cmd)
            .redirectOutput(out.toFile())
            .redirectError(new File(out + ".err"))
            .start();
    processes.add(p);
    return p;
  }

  /** A skip normally; a failure with {@code -Dsrdma.test.requireNetem=true}. */
  private static void need(boolean ok, String why) {
    if (REQUIRE_NETEM) {
      assertTrue(ok, why.replaceFirst(" SKIP: ", " FAIL: ") + " (-Dsrdma.test.requireNetem=true)");
    } else {
      Assumptions.assumeTrue(ok, why);
    }
  }

  private static Duration scaled(Duration d) {
    return FaultWriter.scaled(d);
  }

  private static void waitFor(String what, Duration limit, BooleanSupplier cond)
      throws InterruptedException {
    long start = System.nanoTime();
    long end = start + limit.toNanos();
    while (!cond.getAsBoolean()) {
      assertTrue(System.nanoTime() < end, "timed out waiting for " + what);
      Thread.sleep(100);
    }
    System.out.println(
        "waited " + TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - start) + " ms for " + what);
  }

  private static List<String> lines(Path p) throws IOException {
    return Files.readAllLines(p, StandardCharsets.UTF_8);
  }

  private record Result(int rc, String out) {}

  private static Result sh(String... cmd) throws IOException, InterruptedException {
    Process p = new ProcessBuilder(cmd).redirectErrorStream(true).start();
    if (!p.waitFor(20, TimeUnit.SECONDS)) {
      p.destroyForcibly();
      return new Result(-1, String.join(" ", cmd) + ": timed out");
    }
    return new Result(
        p.exitValue(), new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8));
  }

  private static void must(String... cmd) throws IOException, InterruptedException {
    Result r = sh(cmd);
    assertEquals(0, r.rc, String.join(" ", cmd) + ": " + r.out);
  }
}
