package io.srdma.bench.transport;

import io.srdma.host.ReceivedRecord;
import io.srdma.host.RegionHost;
import io.srdma.keys.Credential;
import io.srdma.keys.DeploymentCa;
import io.srdma.keys.DeploymentTrust;
import io.srdma.keys.PeerIdentity;
import io.srdma.policy.AuditLog;
import java.io.BufferedReader;
import java.io.InputStreamReader;
import java.io.PrintStream;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.time.Duration;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.atomic.AtomicIntegerArray;
import java.util.concurrent.atomic.AtomicLongArray;
import java.util.concurrent.atomic.LongAdder;

/**
 * The host of {@code srdma bench --load --host-process}, in a child JVM of the load run ({@link
 * LoadHostProcess} starts it): the load's {@link RegionHost} with the generated policy, the host
 * credential and the CA's trust from files the parent wrote, one region per tenant, and the
 * records' checks (length, sender, sequence per session). Answers one line per command on stdin
 * with one line on stdout:
 *
 * <pre>
 *   (at start)   ready HOST PORT
 *   stats        stats N N ...             the HostStats components, in order
 *   revoke ID    revoked true|false
 *   sample       sample HEAP DIRECT FDS THREADS HOST_THREADS CLIENT_THREADS BENCH_THREADS
 *   floor        floor PORT                a handshake floor server ({@link HandshakeFloor.Server})
 *   floor-stop   ok
 *   errors       errors KIND=N ...
 *   stop         stopped                   the host closed; the process exits 0
 * </pre>
 *
 * and, unasked, {@code d INDEX:OPENED ...}: sessions whose opened-record count changed, at most
 * every {@link #REPORT_MILLIS} ms, for the parent's flow control and revoker. End of stdin (the
 * parent gone) closes the host and exits, so no host outlives its load run. Everything else the
 * process prints goes to stderr (the parent's file for it).
 *
 * <p>Arguments: the run's directory, sessions, tenants, grants, record size, window, provider.
 */
public final class LoadHostMain {
  static final long REPORT_MILLIS = 2;
  static final String HOST_CRT = "host.crt";
  static final String HOST_KEY = "host.key";

  private final LoadConfig config;
  private final String[] identities;
  private final long[] expected; // per session, on its opener thread
  private final AtomicLongArray opened;
  private final AtomicIntegerArray dirty;
  private final ConcurrentLinkedQueue<Integer> changed = new ConcurrentLinkedQueue<>();
  private final Map<String, LongAdder> errors = new ConcurrentHashMap<>();
  private final PrintStream out;

  private LoadHostMain(LoadConfig config, PrintStream out) {
    this.config = config;
    this.out = out;
    int n = config.sessions();
    identities = new String[n];
    for (int i = 0; i < n; i++) {
      identities[i] = PeerIdentity.of(LoadRun.tenant(i % config.tenants()), "p-" + i).toUri();
    }
    expected = new long[n];
    opened = new AtomicLongArray(n);
    dirty = new AtomicIntegerArray(n);
  }

  public static void main(String[] args) throws Exception {
    // the protocol owns stdout: anything else (logging included) goes to stderr
    PrintStream protocol =
        new PrintStream(
            new java.io.FileOutputStream(java.io.FileDescriptor.out),
            false,
            StandardCharsets.UTF_8);
    System.setOut(System.err);
    int status;
    try {
      status = run(args, protocol);
    } catch (Throwable e) {
      e.printStackTrace();
      status = 1;
    }
    System.err.flush();
    Runtime.getRuntime().halt(status); // no shutdown hook or non-daemon thread can keep it alive
  }

  static LoadConfig config(String[] a) {
    return new LoadConfig(
            Integer.parseInt(a[1]),
            Integer.parseInt(a[2]),
            Integer.parseInt(a[3]),
            Duration.ofSeconds(1),
            Duration.ZERO,
            Integer.parseInt(a[4]),
            Integer.parseInt(a[5]),
            0,
            1,
            a[6])
        .withOpenerThreads(a.length > 7 ? Integer.parseInt(a[7]) : 0);
  }

  private static int run(String[] args, PrintStream out) throws Exception {
    Path dir = Path.of(args[0]);
    LoadConfig config = config(args);
    LoadHostMain main = new LoadHostMain(config, out);
    Set<Long> beforeHost = ThreadCensus.ids();
    Credential credential =
        Credential.load(dir.resolve(HOST_CRT), dir.resolve(HOST_KEY), (char[]) null);
    Path ca = dir.resolve("ca");
    DeploymentTrust trust =
        DeploymentTrust.load(ca.resolve(DeploymentCa.CA_CERTIFICATE), ca.resolve(DeploymentCa.CRL));
    try (AuditLog audit = AuditLog.open(dir.resolve("host-audit.jsonl"))) {
      RegionHost host = RegionHost.start(LoadSetup.hostOptions(config, credential, trust, audit));
      try {
        for (int t = 0; t < config.tenants(); t++) {
          host.registerRegion(LoadRun.tenant(t), "data", LoadRun.REGION_BYTES)
              .onRecord(main::onRecord);
        }
        Set<Long> hostStart = ThreadCensus.ids();
        hostStart.removeAll(beforeHost);
        Thread reporter = new Thread(main::report, LoadRun.BENCH_THREAD + "host-report");
        reporter.setDaemon(true);
        reporter.start();
        main.send(
            "ready "
                + host.address().getAddress().getHostAddress()
                + " "
                + host.address().getPort());
        return main.serve(host, credential, trust, beforeHost, hostStart);
      } finally {
        host.close();
      }
    }
  }

  private int serve(
      RegionHost host,
      Credential credential,
      DeploymentTrust trust,
      Set<Long> beforeHost,
      Set<Long> hostStart)
      throws Exception {
    BufferedReader in =
        new BufferedReader(new InputStreamReader(System.in, StandardCharsets.UTF_8));
    HandshakeFloor.Server floor = null;
    try {
      for (String line; (line = in.readLine()) != null; ) {
        String[] w = line.trim().split(" ");
        switch (w[0]) {
          case "stats" -> send("stats " + LoadHostProcess.format(host.stats()));
          case "revoke" -> send("revoked " + host.revoke(Long.parseLong(w[1]), "load"));
          case "sample" -> {
            LoadSample s = LoadSample.take();
            ThreadCensus c = ThreadCensus.take(beforeHost, hostStart);
            send(
                "sample "
                    + s.heapBytes()
                    + " "
                    + s.directBytes()
                    + " "
                    + s.fds()
                    + " "
                    + s.threads()
                    + " "
                    + c.host()
                    + " "
                    + c.client()
                    + " "
                    + c.bench());
          }
          case "floor" -> {
            if (floor == null) {
              floor =
                  HandshakeFloor.Server.start(
                      credential, trust, LoadRun.CONNECTORS, LoadRun.STEP_TIMEOUT);
            }
            send("floor " + floor.address().getPort());
          }
          case "floor-stop" -> {
            if (floor != null) {
              floor.close();
              floor = null;
            }
            send("ok");
          }
          case "errors" -> {
            StringBuilder b = new StringBuilder("errors");
            new TreeMap<>(errors).forEach((k, v) -> b.append(' ').append(k).append('=').append(v));
            send(b.toString());
          }
          case "stop" -> {
            host.close();
            send("stopped");
            return 0;
          }
          default -> send("unknown " + w[0]);
        }
      }
      System.err.println("load host: stdin closed (the load run ended); closing the host");
      return 2;
    } finally {
      if (floor != null) {
        floor.close();
      }
    }
  }

  private void send(String line) {
    synchronized (out) {
      out.print(line);
      out.print('\n');
      out.flush();
    }
  }

  private void error(String kind) {
    errors.computeIfAbsent(kind, k -> new LongAdder()).increment();
  }

  /** A session's opener thread: one opened record (as {@link LoadRun}'s own check). */
  private void onRecord(ReceivedRecord r) {
    ByteBuffer p = r.payload();
    if (p.remaining() != config.recordSize()) {
      error("record:length");
      return;
    }
    int index = p.getInt(p.position());
    long seq = p.getLong(p.position() + Integer.BYTES);
    if (index < 0 || index >= identities.length || !identities[index].equals(r.identity())) {
      error("record:foreign");
      return;
    }
    if (seq != expected[index]) {
      error("record:sequence");
    }
    expected[index] = seq + 1;
    opened.incrementAndGet(index);
    if (dirty.compareAndSet(index, 0, 1)) {
      changed.add(index);
    }
  }

  /** Tells the parent the opened counts that changed, at most every {@link #REPORT_MILLIS}. */
  private void report() {
    StringBuilder b = new StringBuilder();
    while (true) {
      b.setLength(0);
      int n = 0;
      for (Integer i; n < 512 && (i = changed.poll()) != null; n++) {
        dirty.set(i, 0); // before reading the count: a later record marks it again
        b.append(n == 0 ? "d " : " ").append(i).append(':').append(opened.get(i));
      }
      if (n > 0) {
        send(b.toString());
      }
      if (n < 512) {
        try {
          Thread.sleep(REPORT_MILLIS);
        } catch (InterruptedException e) {
          return;
        }
      }
    }
  }
}
