package io.srdma.cli.bench;

import io.srdma.bench.transport.BenchRunner;
import io.srdma.bench.transport.CpuSplit;
import io.srdma.bench.transport.PipelineDepth;
import io.srdma.bench.transport.Progress;
import io.srdma.bench.transport.Transports;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import picocli.CommandLine;
import picocli.CommandLine.ParameterException;

/**
 * A transport comparison as {@link BenchCommand}'s options ask for it, checked: what {@link
 * BenchRunner} runs ({@code config}), and what the rounds, the headline and the JSON need besides.
 */
record Comparison(
    BenchRunner.Config config,
    String provider,
    int coalesce,
    int rounds,
    CpuSplit cpuSplit,
    Progress.Mode progress,
    Path json) {
  static final Duration QUICK_DURATION = Duration.ofSeconds(1);
  static final Duration QUICK_WARMUP = Duration.ofMillis(250);
  static final int MIN_SIZE = BenchCommand.MIN_SIZE;
  static final int MAX_SIZE = 64 << 20;
  static final long MAX_RING_BYTES = 1L << 30;

  /**
   * The comparison {@code c}'s options ask for.
   *
   * @throws ParameterException naming the first option out of its bounds
   */
  static Comparison of(BenchCommand c) {
    CommandLine cl = c.spec.commandLine();
    boolean explicitDuration = c.duration != null;
    boolean explicitWarmup = c.warmup != null;
    if (c.quick && (explicitDuration || explicitWarmup)) {
      throw new ParameterException(
          cl, "--quick sets --duration and --warmup; give either --quick or those options");
    }
    Duration d = explicitDuration ? c.duration : c.quick ? QUICK_DURATION : Duration.ofSeconds(3);
    Duration w = explicitWarmup ? c.warmup : c.quick ? QUICK_WARMUP : Duration.ofSeconds(1);
    if (d.isZero() || d.isNegative() || d.compareTo(Duration.ofHours(1)) > 0) {
      throw new ParameterException(cl, "--duration must be more than 0 and at most 1h, got " + d);
    }
    if (w.isNegative() || w.compareTo(Duration.ofHours(1)) > 0) {
      throw new ParameterException(cl, "--warmup must be 0 to 1h, got " + w);
    }
    List<Integer> sizes = c.sizes;
    if (sizes == null || sizes.isEmpty()) {
      throw new ParameterException(cl, "--sizes needs at least one size");
    }
    for (int s : sizes) {
      if (s < MIN_SIZE || s > MAX_SIZE) {
        throw new ParameterException(
            cl,
            "--sizes: each size must be "
                + MIN_SIZE
                + " B to 64 MiB, got "
                + io.srdma.policy.Units.formatSize(s),
            c.spec.findOption("--sizes"),
            String.valueOf(s));
      }
    }
    PipelineDepth depth;
    try {
      depth = PipelineDepth.parse(c.depthText);
    } catch (IllegalArgumentException e) {
      throw new ParameterException(cl, e.getMessage());
    }
    if (c.coalesce < 1 || c.coalesce > 1024) {
      throw new ParameterException(cl, "--coalesce must be 1 to 1024, got " + c.coalesce);
    }
    if (c.rounds < 1 || c.rounds > 100) {
      throw new ParameterException(cl, "--rounds must be 1 to 100, got " + c.rounds);
    }
    for (int size : sizes) {
      if ((long) size * depth.forSize(size) > MAX_RING_BYTES) {
        throw new ParameterException(
            cl,
            "--depth "
                + depth.forSize(size)
                + " x size "
                + size
                + " needs more than 1 GiB of registered memory for plain-write; lower one of them");
      }
    }
    List<String> names =
        c.transports == null ? new ArrayList<>(Transports.REGISTRY.keySet()) : c.transports;
    List<String> chosen = new ArrayList<>();
    for (String n : names) {
      String t = n.trim().toLowerCase(Locale.ROOT);
      if (!Transports.REGISTRY.containsKey(t)) {
        throw new ParameterException(
            cl,
            "--transports: unknown transport '"
                + n
                + "'; known: "
                + String.join(", ", Transports.REGISTRY.keySet()));
      }
      if (chosen.contains(t)) {
        throw new ParameterException(cl, "--transports: '" + t + "' given twice");
      }
      chosen.add(t);
    }
    if (chosen.isEmpty()) {
      throw new ParameterException(cl, "--transports needs at least one transport");
    }
    if (c.provider == null || c.provider.isBlank()) {
      throw new ParameterException(cl, "--provider must name a provider: soft, ibv or auto");
    }
    if (c.json != null && Files.isDirectory(c.json)) {
      throw new ParameterException(cl, "--json: " + c.json + " is a directory");
    }
    CpuSplit cpuSplit =
        CpuSplitOption.parse(cl, c.writerCpus, c.receiverCpus)
            .withReceiveProgress(CpuSplitOption.progress(cl, c.receiveProgress));
    BenchRunner.Config config =
        new BenchRunner.Config(List.copyOf(sizes), d, w, List.copyOf(chosen), depth, c.verify);
    return new Comparison(
        config, c.provider, c.coalesce, c.rounds, cpuSplit, c.progressMode, c.json);
  }
}
