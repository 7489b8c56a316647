package io.srdma.bench.transport;

import java.io.IOException;
import java.lang.management.BufferPoolMXBean;
import java.lang.management.ManagementFactory;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.stream.Stream;

/**
 * Heap, direct memory, descriptors and threads at one moment (after a GC), and the growth between
 * two that fails a load run.
 */
public record LoadSample(long heapBytes, long directBytes, long fds, int threads) {
  static LoadSample take() {
    System.gc();
    try {
      Thread.sleep(200);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
    }
    long direct = -1;
    for (BufferPoolMXBean b : ManagementFactory.getPlatformMXBeans(BufferPoolMXBean.class)) {
      if ("direct".equals(b.getName())) {
        direct = b.getMemoryUsed();
      }
    }
    return new LoadSample(
        ManagementFactory.getMemoryMXBean().getHeapMemoryUsage().getUsed(),
        direct,
        openFds(),
        ManagementFactory.getThreadMXBean().getThreadCount());
  }

  /** Open file descriptors of this process ({@code /proc/self/fd}), or -1 where there is none. */
  public static long openFds() {
    Path fd = Path.of("/proc/self/fd");
    if (!Files.isDirectory(fd)) {
      return -1;
    }
    try (Stream<Path> s = Files.list(fd)) {
      return s.count() - 1; // the listing's own descriptor
    } catch (IOException e) {
      return -1;
    }
  }

  /** The soft limit on open descriptors ({@code /proc/self/limits}), or -1 where unknown. */
  public static long fdLimit() {
    try {
      return fdLimit(Files.readAllLines(Path.of("/proc/self/limits")));
    } catch (IOException e) {
      return -1;
    }
  }

  static long fdLimit(List<String> limits) {
    for (String line : limits) {
      if (line.startsWith("Max open files")) {
        String[] f = line.substring("Max open files".length()).trim().split("\\s+");
        try {
          return Long.parseLong(f[0]);
        } catch (NumberFormatException e) {
          return -1; // "unlimited"
        }
      }
    }
    return -1;
  }

  /** What grew beyond the slack from {@code start} to {@code end}; empty when nothing did. */
  static List<String> thresholds(LoadSample start, LoadSample end) {
    List<String> out = new ArrayList<>();
    long heapLimit = start.heapBytes() + Math.max(LoadRun.HEAP_SLACK, start.heapBytes() / 4);
    if (end.heapBytes() > heapLimit) {
      out.add("heap grew from " + start.heapBytes() + " to " + end.heapBytes() + " B");
    }
    if (start.directBytes() >= 0
        && end.directBytes() > start.directBytes() + LoadRun.DIRECT_SLACK) {
      out.add("direct memory grew from " + start.directBytes() + " to " + end.directBytes() + " B");
    }
    if (start.fds() >= 0 && end.fds() > start.fds() + LoadRun.FD_SLACK) {
      out.add("open descriptors grew from " + start.fds() + " to " + end.fds());
    }
    if (end.threads() > start.threads() + LoadRun.THREAD_SLACK) {
      out.add("threads grew from " + start.threads() + " to " + end.threads());
    }
    return out;
  }
}
