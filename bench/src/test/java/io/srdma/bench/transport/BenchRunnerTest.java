package io.srdma.bench.transport;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.PrintWriter;
import java.io.StringWriter;
import java.time.Duration;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.TimeUnit;
import org.HdrHistogram.Histogram;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/** Unavailable and failing transports are reported with their reason, never skipped silently. */
@Timeout(value = 2, unit = TimeUnit.MINUTES)
class BenchRunnerTest {

  /** Cannot run here, like tls-netty without BoringSSL. */
  static class Unavailable implements BenchTransport {
    boolean prepared;

    @Override
    public String name() {
      return "fake-unavailable";
    }

    @Override
    public Optional<String> unavailableReason() {
      return Optional.of("BoringSSL did not load: no library for this CPU");
    }

    @Override
    public void prepare(int messageSize) {
      prepared = true;
    }

    @Override
    public ThroughputResult throughput(RunSpec spec) {
      throw new AssertionError("must not run");
    }

    @Override
    public ThroughputResult latency(RunSpec spec, Histogram oneWayNanos) {
      throw new AssertionError("must not run");
    }

    @Override
    public void close() {}
  }

  /** Loses a message. */
  static final class Lossy extends Unavailable {
    @Override
    public String name() {
      return "fake-lossy";
    }

    @Override
    public Optional<String> unavailableReason() {
      return Optional.empty();
    }

    @Override
    public ThroughputResult throughput(RunSpec spec) {
      return new ThroughputResult(64, 10, 9, 1_000_000, 10, 1_000_000, 0, 0, 0);
    }
  }

  @Test
  void shouldReportUnavailableAndFailedTransportsWithTheirReasons() {
    Map<String, Transports.Factory> registry = new LinkedHashMap<>();
    Unavailable unavailable = new Unavailable();
    registry.put("fake-unavailable", ctx -> unavailable);
    registry.put("fake-lossy", ctx -> new Lossy());
    StringWriter err = new StringWriter();
    StringWriter out = new StringWriter();
    BenchRunner.Config config =
        new BenchRunner.Config(
            List.of(64, 4096),
            Duration.ofMillis(10),
            Duration.ZERO,
            List.of("fake-unavailable", "fake-lossy"),
            PipelineDepth.of(4),
            false);
    List<Measurement> results;
    try (BenchContext ctx = new BenchContext("soft", 4)) {
      Progress progress = new Progress(new PrintWriter(err, true), Progress.Mode.LINES, 4);
      results = new BenchRunner(config, ctx, progress, registry).run();
    }
    assertEquals(4, results.size());
    assertEquals(Measurement.UNAVAILABLE, results.get(0).status());
    assertEquals("BoringSSL did not load: no library for this CPU", results.get(1).reason());
    assertFalse(unavailable.prepared, "an unavailable transport is not prepared");
    assertEquals(Measurement.FAILED, results.get(2).status());
    assertTrue(results.get(2).reason().contains("intact"), results.get(2).reason());
    assertTrue(
        err.toString().contains("fake-unavailable is unavailable here: BoringSSL did not load"),
        err.toString());
    assertTrue(err.toString().contains("fake-lossy at 64 B failed"), err.toString());

    Report.printTables(new PrintWriter(out, true), config.sizes(), results);
    assertTrue(
        out.toString().contains("| fake-unavailable | unavailable: BoringSSL did not load"),
        out.toString());
    assertTrue(out.toString().contains("| fake-lossy | failed: "), out.toString());
  }
}
