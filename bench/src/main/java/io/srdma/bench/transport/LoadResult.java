package io.srdma.bench.transport;

import java.io.PrintWriter;
import java.time.Duration;
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
    List<String> thresholdViolations) {
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
            + " window %d, %.1f revocations/s target, rekey every %d records, provider %s%n%n",
        c.sessions(),
        c.tenants(),
        c.grantsPerSession() * c.sessions(),
        c.grantsPerSession(),
        c.grantLength(),
        c.recordSize(),
        c.window(),
        c.revocationsPerSecond(),
        c.rekeyRecords(),
        c.provider());
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
    out.println(r.ok() ? "load: PASS" : "load: FAIL");
    out.flush();
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
