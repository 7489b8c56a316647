package io.srdma.bench.transport;

import java.lang.management.ManagementFactory;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.function.IntFunction;
import org.HdrHistogram.Histogram;

/**
 * Runs every selected transport at every size: warm-up, the measured throughput run with process
 * CPU time around it, then the latency run. With a {@link #boundProbe}, the sealed transport's
 * throughput run at each size is bracketed by two halves of its AEAD bound ({@link AeadBound}),
 * measured right before and right after it on the same thread.
 */
public final class BenchRunner {
  /**
   * What to run.
   *
   * @param sizes message sizes, bytes
   * @param duration length of each measured run (throughput, and latency, separately)
   * @param warmup length of each warm-up run (throughput, then latency); zero skips warm-up
   * @param transports names from {@link Transports#REGISTRY}, in table order
   * @param depth pipeline depth, by message size, for transports that bound outstanding messages
   * @param verify checksum every message in the measured runs too (costs CPU)
   */
  public record Config(
      List<Integer> sizes,
      Duration duration,
      Duration warmup,
      List<String> transports,
      PipelineDepth depth,
      boolean verify) {}

  private final Config config;
  private final BenchContext context;
  private final Progress progress;
  private final Map<String, Transports.Factory> registry;
  private final Map<String, String> negotiated = new LinkedHashMap<>();
  private final Map<Integer, AeadBound.Rate> roundBounds = new LinkedHashMap<>();
  private IntFunction<AeadBound.Rate> boundProbe;

  public BenchRunner(Config config, BenchContext context, Progress progress) {
    this(config, context, progress, Transports.REGISTRY);
  }

  /** With another registry: tests run fake transports through the same path. */
  public BenchRunner(
      Config config,
      BenchContext context,
      Progress progress,
      Map<String, Transports.Factory> registry) {
    this.config = config;
    this.context = context;
    this.progress = progress;
    this.registry = registry;
  }

  /**
   * What each transport that ran negotiated ({@link BenchTransport#negotiated}), by name, as last
   * seen; transports that negotiate nothing are absent.
   */
  public Map<String, String> negotiated() {
    return Collections.unmodifiableMap(new LinkedHashMap<>(negotiated));
  }

  /**
   * Measures half of the AEAD bound of a message size (its seal and open rates for half the slice)
   * each time it is called; called right before and right after the sealed transport's throughput
   * run at that size, so the bound is taken when and where the result it divides was (on a shared
   * machine one core's AES-GCM rate moved 3.0-4.3 GB/s between adjacent half-second windows). Null
   * (the default): no bound. Not thread-safe: set before the rounds.
   */
  public void boundProbe(IntFunction<AeadBound.Rate> probe) {
    this.boundProbe = probe;
  }

  /**
   * The AEAD bound of each size that the last round measured around the sealed transport's
   * throughput run: the mean of its two halves; empty without a probe, or when sealed did not run.
   */
  public Map<Integer, AeadBound.Rate> lastRoundBounds() {
    return Collections.unmodifiableMap(new LinkedHashMap<>(roundBounds));
  }

  List<Measurement> run() {
    List<Measurement> all = runRound();
    progress.finish();
    return all;
  }

  /** Every transport at every size once; each transport is set up and closed within the round. */
  public List<Measurement> runRound() {
    roundBounds.clear();
    List<Measurement> all = new ArrayList<>();
    for (String name : config.transports()) {
      all.addAll(runTransport(name));
    }
    return all;
  }

  /**
   * One transport at every size, on the writer's CPUs ({@link CpuSplit#pinWriter}) from its set-up
   * to its close, so that the threads it starts on this thread's side inherit them.
   */
  private List<Measurement> runTransport(String name) {
    CpuSplit.Restore restore;
    try {
      restore = context.cpus().pinWriter();
    } catch (RuntimeException e) {
      return notMeasured(
          name, Measurement.FAILED, "cannot pin the writer to its CPUs: " + e.getMessage());
    }
    try (CpuSplit.Restore r = restore) {
      return placedTransport(name);
    }
  }

  private List<Measurement> placedTransport(String name) {
    List<Measurement> out = new ArrayList<>();
    BenchTransport transport;
    try {
      transport = registry.get(name).create(context);
    } catch (RuntimeException | LinkageError e) {
      return notMeasured(name, Measurement.UNAVAILABLE, "cannot create it: " + e);
    }
    try (BenchTransport t = transport) {
      String unavailable = t.unavailableReason().orElse(null);
      if (unavailable != null) {
        progress.note("bench: " + name + " is unavailable here: " + unavailable);
        return notMeasured(name, Measurement.UNAVAILABLE, unavailable);
      }
      for (int size : config.sizes()) {
        out.add(measure(t, size));
        progress.stepDone();
      }
      t.negotiated().ifPresent(n -> negotiated.put(name, n));
    } catch (RuntimeException e) {
      progress.note("bench: closing " + name + " failed: " + e);
    }
    return out;
  }

  private List<Measurement> notMeasured(String name, String status, String reason) {
    List<Measurement> out = new ArrayList<>();
    for (int size : config.sizes()) {
      out.add(Measurement.notMeasured(name, size, status, reason));
      progress.stepDone();
    }
    return out;
  }

  private Measurement measure(BenchTransport t, int size) {
    String name = t.name();
    try {
      progress.phase(name, size, "connecting");
      t.prepare(size);
      if (!config.warmup().isZero()) {
        progress.phase(name, size, "warm-up");
        t.throughput(new RunSpec(config.warmup(), 0, false, config.depth().forSize(size)));
        t.latency(new RunSpec(config.warmup(), 0, false, 1), new Histogram(3));
      }
      progress.phase(name, size, "throughput");
      boolean bound = boundProbe != null && Report.sealed(name);
      AeadBound.Rate before = bound ? boundProbe.apply(size) : null;
      long switches0 = ContextSwitches.total();
      long cpu0 = processCpuNanos();
      ThroughputResult tr =
          t.throughput(
              new RunSpec(config.duration(), 0, config.verify(), config.depth().forSize(size)));
      long cpu1 = processCpuNanos();
      long switches1 = ContextSwitches.total();
      if (bound) {
        roundBounds.put(size, AeadBound.Rate.mean(before, boundProbe.apply(size)));
      }
      if (!tr.intact()) {
        return failed(name, size, "the receiver did not get every message intact: " + tr);
      }
      progress.phase(name, size, "latency");
      Histogram h = new Histogram(3);
      ThroughputResult lr = t.latency(new RunSpec(config.duration(), 0, config.verify(), 1), h);
      if (!lr.intact()) {
        return failed(name, size, "latency run: messages lost or damaged: " + lr);
      }
      double cpuPerGb =
          cpu0 < 0 || cpu1 < 0 || tr.bytesDelivered() == 0
              ? Double.NaN
              : (cpu1 - cpu0) / (double) tr.bytesDelivered();
      return new Measurement(
          name,
          size,
          Measurement.OK,
          null,
          tr,
          h.getValueAtPercentile(50) / 1e3,
          h.getValueAtPercentile(99) / 1e3,
          h.getValueAtPercentile(99.9) / 1e3,
          h.getMaxValue() / 1e3,
          h.getTotalCount(),
          cpuPerGb,
          ContextSwitches.perMessage(switches0, switches1, tr.messagesDelivered()));
    } catch (Exception | LinkageError e) {
      return failed(name, size, String.valueOf(e));
    }
  }

  private Measurement failed(String name, int size, String reason) {
    progress.note("bench: " + name + " at " + Report.size(size) + " failed: " + reason);
    return Measurement.notMeasured(name, size, Measurement.FAILED, reason);
  }

  /** CPU time of the whole process (every thread: both endpoints, JIT, GC), or -1. */
  static long processCpuNanos() {
    if (ManagementFactory.getOperatingSystemMXBean()
        instanceof com.sun.management.OperatingSystemMXBean os) {
      return os.getProcessCpuTime();
    }
    return -1;
  }
}
