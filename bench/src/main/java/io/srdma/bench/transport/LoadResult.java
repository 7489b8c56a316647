package io.srdma.bench.transport;

import java.io.PrintWriter;
import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import org.HdrHistogram.Histogram;

/**
 * The outcome of a {@link LoadRun}, and its report.
 *
 * <p>Thread safety: immutable once made (the histogram is not written after).
 */
public record LoadResult(
    LoadConfig config,
    Duration setup,
    Duration measured,
    long records,
    long bytes,
    Histogram writeLatencyNanos,
    LoadSample start,
    LoadSample end,
    int liveGrantsStart,
    int liveGrantsEnd,
    int sessionsEnd,
    long revocations,
    long refusedRevokedWrites,
    long intendedDenials,
    long rekeys,
    Map<String, Long> errors,
    List<String> thresholdViolations,
    LoadFootprint footprint) {
  public boolean ok() {
    return errors.isEmpty() && thresholdViolations.isEmpty();
  }

  public double recordsPerSecond() {
    return records / seconds();
  }

  public double megabytesPerSecond() {
    return bytes / 1e6 / seconds();
  }

  private double seconds() {
    return Math.max(1e-9, measured.toNanos() / 1e9);
  }

  /** The report, Markdown, for stdout. */
  public static void print(PrintWriter out, LoadResult r) {
    LoadConfig c = r.config();
    out.printf(
        Locale.ROOT,
        "## Load: %d sessions, %d tenants, %d grants (%d per session, %d B each), %d B records,"
            + " window %d, %.1f revocations/s target, rekey every %d records, provider %s,"
            + " %s%n%n",
        c.sessions(),
        c.tenants(),
        c.grantsPerSession() * c.sessions(),
        c.grantsPerSession(),
        c.grantLength(),
        c.recordSize(),
        c.window(),
        c.revocationsPerSecond(),
        c.rekeyRecords(),
        c.provider(),
        c.openerThreads() == 0
            ? "the host's default opener threads"
            : c.openerThreads() + " opener thread(s)");
    Histogram h = r.writeLatencyNanos();
    out.println("| figure | value |");
    out.println("|---|---|");
    row(out, "set-up (connect + grants)", String.format(Locale.ROOT, "%.1f s", secs(r.setup())));
    row(out, "measured", String.format(Locale.ROOT, "%.1f s", secs(r.measured())));
    row(out, "records opened by the host", String.valueOf(r.records()));
    row(out, "records/s", String.format(Locale.ROOT, "%.0f", r.recordsPerSecond()));
    row(out, "MB/s opened (10^6 B)", String.format(Locale.ROOT, "%.2f", r.megabytesPerSecond()));
    row(
        out,
        "write latency p50 / p99 / p99.9 (µs)",
        String.format(
            Locale.ROOT,
            "%.0f / %.0f / %.0f (%d writes)",
            h.getValueAtPercentile(50) / 1e3,
            h.getValueAtPercentile(99) / 1e3,
            h.getValueAtPercentile(99.9) / 1e3,
            h.getTotalCount()));
    row(out, "live grants at start / end", r.liveGrantsStart() + " / " + r.liveGrantsEnd());
    row(out, "sessions open at end", String.valueOf(r.sessionsEnd()));
    row(out, "revocations (host.revoke)", String.valueOf(r.revocations()));
    row(out, "writes refused REVOKED (intended)", String.valueOf(r.refusedRevokedWrites()));
    row(out, "grants denied (intended)", String.valueOf(r.intendedDenials()));
    row(out, "rekeys (epochs advanced)", String.valueOf(r.rekeys()));
    row(out, "heap used start / end (MiB)", mib(r.start().heapBytes(), r.end().heapBytes()));
    row(out, "direct used start / end (MiB)", mib(r.start().directBytes(), r.end().directBytes()));
    row(out, "open fds start / end", r.start().fds() + " / " + r.end().fds());
    row(out, "threads start / end", r.start().threads() + " / " + r.end().threads());
    row(out, "unintended errors", r.errors().isEmpty() ? "0" : r.errors().toString());
    row(
        out,
        "threshold violations",
        r.thresholdViolations().isEmpty() ? "none" : String.join("; ", r.thresholdViolations()));
    out.println();
    printFootprint(out, r.footprint());
    out.println(r.ok() ? "load: PASS" : "load: FAIL");
    out.flush();
  }

  /** Issue 17's figures per side and its targets (they do not decide the exit status). */
  static void printFootprint(PrintWriter out, LoadFootprint f) {
    if (f == null) {
      return;
    }
    boolean split = f.hostProcess();
    out.println(
        split
            ? "### Per side (host in its own process, clients in this one; docs/bench.md says how)"
            : "### Per side (host and clients in this JVM; docs/bench.md says how)");
    out.println();
    out.println("| figure | idle host | after warm-up | at end |");
    out.println("|---|---|---|---|");
    out.println(
        "| host threads | "
            + f.threadsIdle().host()
            + " | "
            + f.threadsLoaded().host()
            + " | "
            + f.threadsEnd().host()
            + " |");
    out.println(
        "| client-side threads | "
            + f.threadsIdle().client()
            + " | "
            + f.threadsLoaded().client()
            + " | "
            + f.threadsEnd().client()
            + " |");
    out.println(
        "| bench and JVM threads | "
            + f.threadsIdle().bench()
            + " | "
            + f.threadsLoaded().bench()
            + " | "
            + f.threadsEnd().bench()
            + " |");
    if (split) {
      out.println(
          "| open descriptors host process / clients' process | "
              + f.fdsIdle().host()
              + " / "
              + f.fdsIdle().client()
              + " | "
              + f.fdsLoaded().host()
              + " / "
              + f.fdsLoaded().client()
              + " | |");
      out.println(
          "| heap + direct, host process (MiB) | "
              + String.format(Locale.ROOT, "%.1f", total(f.hostIdle()) / 1048576.0)
              + " | "
              + String.format(Locale.ROOT, "%.1f", total(f.hostLoaded()) / 1048576.0)
              + " | |");
    } else {
      out.println(
          "| descriptors host / client / unattributed | "
              + fds(f.fdsIdle())
              + " | "
              + fds(f.fdsLoaded())
              + " | |");
    }
    out.println(
        (split ? "| heap + direct, clients' process (MiB) | " : "| heap + direct (MiB) | ")
            + String.format(Locale.ROOT, "%.1f", total(f.idle()) / 1048576.0)
            + " | "
            + String.format(Locale.ROOT, "%.1f", total(f.loaded()) / 1048576.0)
            + " | |");
    out.println();
    row(out, "client-side threads by name", f.threadsLoaded().topClientNames(8));
    row(
        out,
        split
            ? "heap + direct per session, clients' process (KiB)"
            : "heap + direct per session, both sides (KiB)",
        String.format(Locale.ROOT, "%.1f", f.bytesPerSession() / 1024));
    if (split) {
      row(
          out,
          "heap + direct per session, host process (KiB)",
          String.format(Locale.ROOT, "%.1f", f.hostBytesPerSession() / 1024));
    }
    row(
        out,
        "clients' record buffers per session (KiB, excluded)",
        String.format(Locale.ROOT, "%.1f", f.recordBufferBytesPerSession() / 1024.0));
    row(
        out,
        "bare mutual TLS 1.3 handshakes (floor)",
        String.format(Locale.ROOT, "%d, %.0f/s", f.floorHandshakes(), f.handshakeFloorPerSecond()));
    row(out, "open-descriptor limit (ulimit -n)", String.valueOf(f.fdLimit()));
    out.println();
    out.println("| issue 17 target | figure | limit | verdict |");
    out.println("|---|---|---|---|");
    int met = 0;
    List<LoadFootprint.Target> targets = f.targets();
    for (LoadFootprint.Target t : targets) {
      out.println(
          "| " + t.name() + " | " + t.figure() + " | " + t.limit() + " | " + t.verdict() + " |");
      met += t.verdict() == LoadFootprint.Verdict.PASS ? 1 : 0;
    }
    out.println();
    out.println("targets: " + met + " of " + targets.size() + " met");
  }

  private static String fds(FdCensus c) {
    return c.host() + " / " + c.client() + " / " + c.other();
  }

  private static long total(LoadSample s) {
    return s.heapBytes() + Math.max(0, s.directBytes());
  }

  /** The run as a JSON tree for {@link Report#json(Map)}, under the command's {@code header}. */
  public static Map<String, Object> json(Map<String, Object> header, LoadResult r) {
    Map<String, Object> root = new LinkedHashMap<>(header);
    LoadConfig c = r.config();
    Map<String, Object> config = new LinkedHashMap<>();
    config.put("sessions", c.sessions());
    config.put("tenants", c.tenants());
    config.put("grants", (long) c.grantsPerSession() * c.sessions());
    config.put("grantsPerSession", c.grantsPerSession());
    config.put("grantBytes", c.grantLength());
    config.put("recordSize", c.recordSize());
    config.put("window", c.window());
    config.put("revocationsPerSecond", c.revocationsPerSecond());
    config.put("openerThreads", c.openerThreads());
    config.put("rekeyRecords", c.rekeyRecords());
    config.put("provider", c.provider());
    config.put("warmupMs", c.warmup().toMillis());
    config.put("durationMs", c.duration().toMillis());
    root.put("config", config);
    Map<String, Object> m = new LinkedHashMap<>();
    Histogram h = r.writeLatencyNanos();
    m.put("setupSeconds", secs(r.setup()));
    m.put("measuredSeconds", secs(r.measured()));
    m.put("records", r.records());
    m.put("recordsPerSecond", r.recordsPerSecond());
    m.put("megabytesPerSecond", r.megabytesPerSecond());
    m.put("writeLatencyP50Us", h.getValueAtPercentile(50) / 1e3);
    m.put("writeLatencyP99Us", h.getValueAtPercentile(99) / 1e3);
    m.put("writeLatencyP999Us", h.getValueAtPercentile(99.9) / 1e3);
    m.put("writes", h.getTotalCount());
    m.put("liveGrantsStart", r.liveGrantsStart());
    m.put("liveGrantsEnd", r.liveGrantsEnd());
    m.put("sessionsEnd", r.sessionsEnd());
    m.put("revocations", r.revocations());
    m.put("refusedRevokedWrites", r.refusedRevokedWrites());
    m.put("intendedDenials", r.intendedDenials());
    m.put("rekeys", r.rekeys());
    m.put("start", sample(r.start()));
    m.put("end", sample(r.end()));
    root.put("measured", m);
    root.put("errors", new LinkedHashMap<String, Object>(r.errors()));
    root.put("thresholdViolations", new ArrayList<Object>(r.thresholdViolations()));
    LoadFootprint f = r.footprint();
    if (f != null) {
      Map<String, Object> p = new LinkedHashMap<>();
      p.put("hostThreads", f.hostThreads());
      p.put("clientThreads", f.clientThreads());
      p.put(
          "clientThreadsByName",
          new LinkedHashMap<String, Object>(f.threadsLoaded().clientByName()));
      p.put("benchThreads", f.threadsLoaded().bench());
      p.put("hostFdsPerSession", f.hostFdsPerSession());
      p.put("clientFdsPerSession", f.clientFdsPerSession());
      p.put("fdsIdle", fdJson(f.fdsIdle()));
      p.put("fdsAfterWarmup", fdJson(f.fdsLoaded()));
      p.put("fdLimit", f.fdLimit());
      p.put("hostProcess", f.hostProcess());
      p.put("idle", sample(f.idle()));
      if (f.hostProcess()) {
        p.put("hostIdle", sample(f.hostIdle()));
        p.put("hostAfterWarmup", sample(f.hostLoaded()));
        p.put("bytesPerSessionClientProcess", f.bytesPerSession());
      } else {
        p.put("bytesPerSessionBothSides", f.bytesPerSession());
        p.put("hostBytesPerSessionBound", f.hostBytesPerSessionBound());
      }
      p.put("recordBufferBytesPerSession", f.recordBufferBytesPerSession());
      p.put("hostBytesPerSession", f.hostBytesPerSession());
      p.put("connectSeconds", f.connectNanos() / 1e9);
      p.put("setupPerSecond", f.setupPerSecond());
      p.put("handshakeFloorPerSecond", f.handshakeFloorPerSecond());
      p.put("floorHandshakes", f.floorHandshakes());
      p.put("setupRatio", f.setupRatio());
      List<Object> targets = new ArrayList<>();
      for (LoadFootprint.Target t : f.targets()) {
        Map<String, Object> one = new LinkedHashMap<>();
        one.put("target", t.name());
        one.put("figure", t.figure());
        one.put("limit", t.limit());
        one.put("verdict", t.verdict().name());
        targets.add(one);
      }
      p.put("targets", targets);
      root.put("footprint", p);
    }
    root.put("result", r.ok() ? "PASS" : "FAIL");
    return root;
  }

  private static Map<String, Object> sample(LoadSample s) {
    Map<String, Object> m = new LinkedHashMap<>();
    m.put("heapBytes", s.heapBytes());
    m.put("directBytes", s.directBytes());
    m.put("fds", s.fds());
    m.put("threads", s.threads());
    return m;
  }

  private static Map<String, Object> fdJson(FdCensus c) {
    Map<String, Object> m = new LinkedHashMap<>();
    m.put("host", c.host());
    m.put("client", c.client());
    m.put("unattributed", c.other());
    return m;
  }

  private static double secs(Duration d) {
    return d.toNanos() / 1e9;
  }

  private static String mib(long a, long b) {
    return String.format(Locale.ROOT, "%.1f / %.1f", a / 1048576.0, b / 1048576.0);
  }

  private static void row(PrintWriter out, String k, String v) {
    out.println("| " + k + " | " + v + " |");
  }
}
