package io.srdma.bench.transport;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.PrintWriter;
import java.io.StringWriter;
import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.TimeUnit;
import org.HdrHistogram.Histogram;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * Unavailable and failing transports are reported with their reason, never skipped silently; the
 * sealed transport's AEAD bound is measured right around its throughput run.
 */
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

  /** Records what the runner asks of it, in order. */
  static final class Recording extends Unavailable {
    private final String name;
    private final List<String> events;

    Recording(String name, List<String> events) {
      this.name = name;
      this.events = events;
    }

    @Override
    public String name() {
      return name;
    }

    @Override
    public Optional<String> unavailableReason() {
      return Optional.empty();
    }

    @Override
    public ThroughputResult throughput(RunSpec spec) {
      events.add(name + " throughput");
      return new ThroughputResult(64, 10, 10, 1_000_000, 10, 1_000_000, 0, 0, 0);
    }

    @Override
    public ThroughputResult latency(RunSpec spec, Histogram oneWayNanos) {
      events.add(name + " latency");
      oneWayNanos.recordValue(1_000);
      return new ThroughputResult(64, 1, 1, 1_000, 1, 1_000, 0, 0, 0);
    }
  }

  @Test
  void shouldBracketOnlyTheSealedThroughputRunWithTheTwoHalvesOfItsBound() {
    List<String> events = new ArrayList<>();
    Map<String, Transports.Factory> registry = new LinkedHashMap<>();
    registry.put("fake-tls", ctx -> new Recording("fake-tls", events));
    registry.put(SealedTransport.NAME, ctx -> new Recording(SealedTransport.NAME, events));
    BenchRunner.Config config =
        new BenchRunner.Config(
            List.of(64, 4096),
            Duration.ofMillis(10),
            Duration.ZERO,
            List.of("fake-tls", SealedTransport.NAME),
            PipelineDepth.of(4),
            false);
    try (BenchContext ctx = new BenchContext("soft", 4)) {
      Progress progress =
          new Progress(new PrintWriter(new StringWriter(), true), Progress.Mode.LINES, 4);
      BenchRunner runner = new BenchRunner(config, ctx, progress, registry);
      double[] rate = {1000};
      runner.boundProbe(
          size -> {
            events.add("bound " + size);
            rate[0] += 1000;
            return new AeadBound.Rate(size, rate[0], 2 * rate[0]);
          });
      List<Measurement> results = runner.runRound();
      assertTrue(results.stream().allMatch(Measurement::ok), results::toString);
      assertEquals(
          List.of(
              "fake-tls throughput",
              "fake-tls latency",
              "fake-tls throughput",
              "fake-tls latency",
              "bound 64",
              "sealed throughput",
              "bound 64",
              "sealed latency",
              "bound 4096",
              "sealed throughput",
              "bound 4096",
              "sealed latency"),
          events);
      Map<Integer, AeadBound.Rate> bounds = runner.lastRoundBounds();
      assertEquals(List.of(64, 4096), List.copyOf(bounds.keySet()));
      assertEquals(new AeadBound.Rate(64, 2500, 5000), bounds.get(64), "the mean of its halves");
      assertEquals(new AeadBound.Rate(4096, 4500, 9000), bounds.get(4096));

      events.clear();
      registry.remove(SealedTransport.NAME);
      BenchRunner tlsOnly =
          new BenchRunner(
              new BenchRunner.Config(
                  List.of(64),
                  Duration.ofMillis(10),
                  Duration.ZERO,
                  List.of("fake-tls"),
                  PipelineDepth.of(4),
                  false),
              ctx,
              progress,
              registry);
      tlsOnly.boundProbe(
          size -> {
            throw new AssertionError("no bound without the sealed transport");
          });
      tlsOnly.runRound();
      assertTrue(tlsOnly.lastRoundBounds().isEmpty());
    }
  }
}
