package io.srdma.bench.transport;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import io.srdma.verbs.CpuAffinity;
import io.srdma.verbs.CpuSet;
import java.io.PrintWriter;
import java.io.StringWriter;
import java.time.Duration;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.TimeUnit;
import org.HdrHistogram.Histogram;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * {@code --writer-cpus / --receiver-cpus}: the writer runs on its CPUs from set-up to close and
 * gets its own back after, the receiving side on its own; the real transports deliver intact when
 * split.
 */
@Timeout(value = 3, unit = TimeUnit.MINUTES)
class CpuSplitTest {
  /** Records where it was set up, where it wrote and where its receiver ran. */
  static final class Probe implements BenchTransport {
    final CpuSplit cpus;
    final Set<String> writerCpus = ConcurrentHashMap.newKeySet();
    final Set<String> receiverCpus = ConcurrentHashMap.newKeySet();

    Probe(CpuSplit cpus) {
      this.cpus = cpus;
      writerCpus.add(CpuAffinity.current().toString());
    }

    @Override
    public String name() {
      return "probe";
    }

    @Override
    public void prepare(int messageSize) {
      writerCpus.add(CpuAffinity.current().toString());
    }

    @Override
    public ThroughputResult throughput(RunSpec spec) throws Exception {
      writerCpus.add(CpuAffinity.current().toString());
      CompletableFuture<Void> received =
          ReceiverThread.start(
              "probe-receiver",
              cpus,
              () -> receiverCpus.add(CpuAffinity.current().toString()),
              () -> {});
      ReceiverThread.await(received, Duration.ofSeconds(10), "probe receiver");
      return new ThroughputResult(64, 1, 1, 1_000_000, 1, 1_000_000, 0, 0, 0);
    }

    @Override
    public ThroughputResult latency(RunSpec spec, Histogram oneWayNanos) throws Exception {
      oneWayNanos.recordValue(1_000);
      return throughput(spec);
    }

    @Override
    public void close() {
      writerCpus.add(CpuAffinity.current().toString());
    }
  }

  private static CpuSplit twoSides() {
    assumeTrue(CpuAffinity.supported(), "CPU affinity needs 64-bit Linux");
    int[] all = CpuAffinity.current().toArray();
    assumeTrue(all.length >= 2, "needs 2 CPUs to split");
    return new CpuSplit(CpuSet.of(all[0]), CpuSet.of(all[all.length - 1]));
  }

  @Test
  void theWriterRunsOnItsCpusThroughoutAndGetsItsOwnBackTheReceiverOnItsOwn() throws Exception {
    CpuSplit split = twoSides();
    CpuSet before = CpuAffinity.current();
    Map<String, Probe> made = new ConcurrentHashMap<>();
    Map<String, Transports.Factory> registry = new LinkedHashMap<>();
    registry.put("probe", ctx -> made.computeIfAbsent("probe", k -> new Probe(ctx.cpus())));
    BenchRunner.Config config =
        new BenchRunner.Config(
            List.of(64, 4096),
            Duration.ofMillis(10),
            Duration.ofMillis(5),
            List.of("probe"),
            PipelineDepth.of(4),
            false);
    List<Measurement> results;
    try (BenchContext ctx = new BenchContext("soft", PipelineDepth.of(4), 1, split)) {
      Progress progress =
          new Progress(new PrintWriter(new StringWriter(), true), Progress.Mode.NONE, 2);
      results = new BenchRunner(config, ctx, progress, registry).run();
    }
    assertTrue(results.stream().allMatch(Measurement::ok), results.toString());
    Probe p = made.get("probe");
    assertEquals(Set.of(split.writer().toString()), p.writerCpus, "the writer's CPUs");
    assertEquals(Set.of(split.receiver().toString()), p.receiverCpus, "the receiver's CPUs");
    assertEquals(before, CpuAffinity.current(), "the runner's thread got its CPUs back");
  }

  @Test
  void aWriterSetThatCannotBeHadFailsTheTransportWithTheReason() {
    assumeTrue(CpuAffinity.supported(), "CPU affinity needs 64-bit Linux");
    assumeTrue(!CpuAffinity.current().contains(CpuSet.MAX_CPU), "this machine has CPU 1023");
    CpuSet before = CpuAffinity.current();
    Map<String, Transports.Factory> registry = new LinkedHashMap<>();
    registry.put("probe", ctx -> new Probe(ctx.cpus()));
    BenchRunner.Config config =
        new BenchRunner.Config(
            List.of(64),
            Duration.ofMillis(10),
            Duration.ZERO,
            List.of("probe"),
            PipelineDepth.of(4),
            false);
    List<Measurement> results;
    CpuSplit impossible = new CpuSplit(CpuSet.of(CpuSet.MAX_CPU), null);
    try (BenchContext ctx = new BenchContext("soft", PipelineDepth.of(4), 1, impossible)) {
      Progress progress =
          new Progress(new PrintWriter(new StringWriter(), true), Progress.Mode.NONE, 1);
      results = new BenchRunner(config, ctx, progress, registry).run();
    }
    assertEquals(Measurement.FAILED, results.get(0).status());
    assertTrue(results.get(0).reason().contains("cannot pin the writer"), results.get(0).reason());
    assertEquals(before, CpuAffinity.current());
  }

  @Test
  void everyRealTransportDeliversIntactWhenSplit() throws Exception {
    CpuSplit split = twoSides();
    BenchRunner.Config config =
        new BenchRunner.Config(
            List.of(64, 65536),
            Duration.ofMillis(300),
            Duration.ZERO,
            List.copyOf(Transports.REGISTRY.keySet()),
            PipelineDepth.auto(),
            true);
    List<Measurement> results;
    StringWriter err = new StringWriter();
    try (BenchContext ctx = new BenchContext("soft", PipelineDepth.auto(), 1, split)) {
      Progress progress = new Progress(new PrintWriter(err, true), Progress.Mode.LINES, 8);
      results = new BenchRunner(config, ctx, progress, Transports.REGISTRY).run();
    }
    for (Measurement m : results) {
      assertTrue(
          m.ok() || Measurement.UNAVAILABLE.equals(m.status()),
          () -> m.transport() + " at " + m.messageSize() + ": " + m.status() + " " + m.reason());
    }
    assertTrue(
        results.stream().filter(Measurement::ok).count() >= 6,
        () -> "sealed, plain-write and tls-jdk at least: " + results + "\n" + err);
  }
}
