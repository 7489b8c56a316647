package io.srdma.cli.bench;

import io.srdma.bench.transport.BenchRunner;
import io.srdma.bench.transport.CpuModel;
import io.srdma.bench.transport.CpuSplit;
import io.srdma.bench.transport.Report;
import io.srdma.channel.record.AeadSelection;
import java.io.PrintWriter;
import java.lang.management.ManagementFactory;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;

/** The first line {@code srdma bench} prints: what runs, on which machine. */
final class BenchHeadline {
  private BenchHeadline() {}

  /** The comparison's: durations, depth, coalescing, provider, AEAD, CPUs and the machine. */
  static String comparison(Comparison run, AeadSelection.Choice cipher) {
    BenchRunner.Config c = run.config();
    CpuSplit cpuSplit = run.cpuSplit();
    return String.format(
        Locale.ROOT,
        "srdma bench: %s per run after %s warm-up, depth %s%s, provider %s, AEAD %s%s%s, receive"
            + " progress %s; JDK %s, %d CPUs (%s), load average %.2f",
        Report.duration(c.duration()),
        Report.duration(c.warmup()),
        depthLine(c),
        run.coalesce() > 1 ? ", coalescing up to " + run.coalesce() + " messages per unit" : "",
        run.provider(),
        cipher.plan().description(),
        c.verify() ? ", verifying every message" : "",
        cpuSplit.active() ? ", " + cpuSplit.describe() : "",
        cpuSplit.receiveProgress().name().toLowerCase(Locale.ROOT),
        Runtime.version(),
        Runtime.getRuntime().availableProcessors(),
        CpuModel.read().describe(),
        ManagementFactory.getOperatingSystemMXBean().getSystemLoadAverage());
  }

  /** {@code --load}'s, and a blank line. */
  static void printLoad(PrintWriter out, AeadSelection.Choice cipher) {
    out.printf(
        Locale.ROOT,
        "srdma bench --load: AEAD %s, JDK %s, %d CPUs, load average %.2f, max heap %d MiB%n%n",
        cipher.plan().description(),
        Runtime.version(),
        Runtime.getRuntime().availableProcessors(),
        ManagementFactory.getOperatingSystemMXBean().getSystemLoadAverage(),
        Runtime.getRuntime().maxMemory() >> 20);
  }

  /** "16", or "auto (256 at 64 B, 16 at 4 KiB)". */
  private static String depthLine(BenchRunner.Config c) {
    if (!c.depth().isAuto()) {
      return c.depth().toString();
    }
    List<String> each = new ArrayList<>();
    for (int size : c.sizes()) {
      each.add(c.depth().forSize(size) + " at " + io.srdma.policy.Units.formatSize(size));
    }
    return "auto (" + String.join(", ", each) + ")";
  }
}
