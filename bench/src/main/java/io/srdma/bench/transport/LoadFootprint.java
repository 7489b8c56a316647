package io.srdma.bench.transport;

import java.util.ArrayList;
import java.util.List;
import java.util.Locale;

/**
 * What issue 17 measures of a {@link LoadRun}, per side, and its targets: host threads and client
 * threads (each at most {@link #MAX_THREADS}, whatever the number of sessions), descriptors per
 * session on each side (at most {@link #MAX_FDS_PER_SESSION}), host memory per session (heap +
 * direct, regions and user-sized record buffers excluded; at most {@link #MAX_BYTES_PER_SESSION})
 * and the session set-up rate (at least {@link #MIN_SETUP_RATIO} of the bare mutual TLS 1.3
 * handshake rate measured in the same run, {@link HandshakeFloor}).
 *
 * <p>{@code idle} is taken after the host started and registered its regions, before any client;
 * {@code loaded} after the warm-up, {@code end} at the end before closing. Per-session figures are
 * the difference between {@code loaded} and {@code idle} divided by the sessions. Memory, host and
 * clients in one JVM: the heap + direct difference holds both sides' memory; less the clients'
 * record buffers it is an upper bound of the host's, which proves the target when it is below it
 * and proves nothing when it is above ({@link Verdict#NOT_SHOWN}). With the host in its own process
 * ({@code hostIdle} and {@code hostLoaded} not null, {@code --host-process}): the host's memory per
 * session is its process's heap + direct difference divided by the sessions (its regions are
 * registered before {@code hostIdle}, and the host has no other user-sized buffer), a figure that
 * meets or misses the target; the censuses then hold each process's figures ({@link LoadRun}).
 *
 * <p>Thread safety: immutable.
 */
public record LoadFootprint(
    int sessions,
    LoadSample idle,
    LoadSample loaded,
    ThreadCensus threadsIdle,
    ThreadCensus threadsLoaded,
    ThreadCensus threadsEnd,
    FdCensus fdsIdle,
    FdCensus fdsLoaded,
    long recordBufferBytesPerSession,
    long connectNanos,
    double handshakeFloorPerSecond,
    int floorHandshakes,
    long fdLimit,
    LoadSample hostIdle,
    LoadSample hostLoaded) {
  public static final int MAX_THREADS = 32;
  public static final double MAX_FDS_PER_SESSION = 4;
  public static final long MAX_BYTES_PER_SESSION = 64 * 1024;
  public static final double MIN_SETUP_RATIO = 0.8;

  /** Host and clients in one process. */
  public LoadFootprint(
      int sessions,
      LoadSample idle,
      LoadSample loaded,
      ThreadCensus threadsIdle,
      ThreadCensus threadsLoaded,
      ThreadCensus threadsEnd,
      FdCensus fdsIdle,
      FdCensus fdsLoaded,
      long recordBufferBytesPerSession,
      long connectNanos,
      double handshakeFloorPerSecond,
      int floorHandshakes,
      long fdLimit) {
    this(
        sessions,
        idle,
        loaded,
        threadsIdle,
        threadsLoaded,
        threadsEnd,
        fdsIdle,
        fdsLoaded,
        recordBufferBytesPerSession,
        connectNanos,
        handshakeFloorPerSecond,
        floorHandshakes,
        fdLimit,
        null,
        null);
  }

  /** Whether the host ran in its own process (its figures measured there alone). */
  public boolean hostProcess() {
    return hostIdle != null && hostLoaded != null;
  }

  /** A target's outcome. */
  public enum Verdict {
    PASS,
    FAIL,
    /** The figure is a bound above the target: it neither meets nor misses it. */
    NOT_SHOWN
  }

  /** One of issue 17's targets: its name, the figure, the limit and the outcome. */
  public record Target(String name, String figure, String limit, Verdict verdict) {}

  public int hostThreads() {
    return Math.max(threadsLoaded.host(), threadsEnd.host());
  }

  public int clientThreads() {
    return Math.max(threadsLoaded.client(), threadsEnd.client());
  }

  /** Host-side descriptors added per session. */
  public double hostFdsPerSession() {
    return perSession(fdsLoaded.host() - fdsIdle.host());
  }

  /**
   * Client-side descriptors added per session: the client's sockets plus every descriptor added
   * that no port attributes (selectors, pipes), see {@link FdCensus}.
   */
  public double clientFdsPerSession() {
    return perSession(
        fdsLoaded.client() - fdsIdle.client() + Math.max(0, fdsLoaded.other() - fdsIdle.other()));
  }

  /**
   * Heap + direct added per session in the clients' process, record buffers included: both sides
   * when the host shares it, the clients' alone with {@link #hostProcess}.
   */
  public double bytesPerSession() {
    return perSession(total(loaded) - total(idle));
  }

  /**
   * The bound of the host's memory per session: {@link #bytesPerSession} less the clients' record
   * buffers (staging slots and read buffer, user-sized).
   */
  public double hostBytesPerSessionBound() {
    return bytesPerSession() - recordBufferBytesPerSession;
  }

  /**
   * The host's memory per session: measured in its own process with {@link #hostProcess}, else the
   * bound {@link #hostBytesPerSessionBound}.
   */
  public double hostBytesPerSession() {
    return hostProcess()
        ? perSession(total(hostLoaded) - total(hostIdle))
        : hostBytesPerSessionBound();
  }

  /** Sessions connected per second (TLS, session handshake, queue pairs; grants not included). */
  public double setupPerSecond() {
    return sessions / Math.max(1e-9, connectNanos / 1e9);
  }

  public double setupRatio() {
    return handshakeFloorPerSecond > 0 ? setupPerSecond() / handshakeFloorPerSecond : Double.NaN;
  }

  private static long total(LoadSample s) {
    return s.heapBytes() + Math.max(0, s.directBytes());
  }

  private double perSession(long delta) {
    return (double) delta / Math.max(1, sessions);
  }

  /** Issue 17's targets, in the order the report prints them. */
  public List<Target> targets() {
    List<Target> t = new ArrayList<>();
    t.add(
        new Target(
            "host threads (srdma-host-* and the host's soft device)",
            String.valueOf(hostThreads()),
            "<= " + MAX_THREADS,
            verdict(hostThreads() <= MAX_THREADS)));
    t.add(
        new Target(
            "client-side threads (all other non-bench threads)",
            String.valueOf(clientThreads()),
            "<= " + MAX_THREADS,
            verdict(clientThreads() <= MAX_THREADS)));
    t.add(
        new Target(
            "host descriptors per session",
            fmt("%.2f", hostFdsPerSession()),
            "<= " + (int) MAX_FDS_PER_SESSION,
            verdict(hostFdsPerSession() <= MAX_FDS_PER_SESSION)));
    t.add(
        new Target(
            hostProcess()
                ? "client descriptors per session (the clients' process)"
                : "client descriptors per session (unattributed counted here)",
            fmt("%.2f", clientFdsPerSession()),
            "<= " + (int) MAX_FDS_PER_SESSION,
            verdict(clientFdsPerSession() <= MAX_FDS_PER_SESSION)));
    double bytes = hostBytesPerSession();
    t.add(
        new Target(
            hostProcess()
                ? "host memory per session (the host process's heap + direct)"
                : "host memory per session (bound: both sides' heap + direct, less record buffers)",
            fmt("%.1f KiB", bytes / 1024),
            "<= " + MAX_BYTES_PER_SESSION / 1024 + " KiB",
            bytes <= MAX_BYTES_PER_SESSION
                ? Verdict.PASS
                : hostProcess() ? Verdict.FAIL : Verdict.NOT_SHOWN));
    double ratio = setupRatio();
    t.add(
        new Target(
            "session set-up rate / bare mutual TLS 1.3 handshake rate",
            fmt("%.0f/s / %.0f/s = %.2fx", setupPerSecond(), handshakeFloorPerSecond, ratio),
            ">= " + MIN_SETUP_RATIO + "x",
            Double.isNaN(ratio) ? Verdict.NOT_SHOWN : verdict(ratio >= MIN_SETUP_RATIO)));
    return t;
  }

  private static Verdict verdict(boolean met) {
    return met ? Verdict.PASS : Verdict.FAIL;
  }

  private static String fmt(String f, Object... a) {
    return String.format(Locale.ROOT, f, a);
  }
}
