package io.srdma.verbs.doctor;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;

/**
 * The locked-memory limit of this process ({@code ulimit -l}), from {@code <proc>/self/limits}, and
 * whether it applies: a process with {@code CAP_IPC_LOCK} (root) may pin any amount. Registering a
 * memory region pins its pages, so a low limit makes {@code ibv_reg_mr} fail with ENOMEM.
 *
 * @param softLimitBytes the soft limit in bytes, {@link Long#MAX_VALUE} for unlimited, -1 unknown
 * @param capIpcLock whether the process holds {@code CAP_IPC_LOCK}
 */
public record Memlock(long softLimitBytes, boolean capIpcLock) {
  /** Below this, registering the channel's regions is likely to fail (64 MiB). */
  public static final long MIN_BYTES = 64L << 20;

  private static final int CAP_IPC_LOCK = 14;

  /** Reads {@code <proc>/self/limits} and {@code <proc>/self/status}. */
  public static Memlock read(Path proc) {
    return new Memlock(
        parseLimits(readOrEmpty(proc.resolve("self/limits"))),
        parseCapIpcLock(readOrEmpty(proc.resolve("self/status"))));
  }

  /** The soft "Max locked memory" limit from the text of {@code /proc/self/limits}. */
  static long parseLimits(String limits) {
    for (String line : limits.split("\n", -1)) {
      if (line.startsWith("Max locked memory")) {
        String[] f = line.substring("Max locked memory".length()).trim().split("\\s+", -1);
        if (f.length == 0 || f[0].isEmpty()) {
          return -1;
        }
        if ("unlimited".equals(f[0])) {
          return Long.MAX_VALUE;
        }
        try {
          return Long.parseLong(f[0]);
        } catch (NumberFormatException e) {
          return -1;
        }
      }
    }
    return -1;
  }

  /** Whether bit 14 of {@code CapEff} is set in the text of {@code /proc/self/status}. */
  static boolean parseCapIpcLock(String status) {
    for (String line : status.split("\n", -1)) {
      if (line.startsWith("CapEff:")) {
        try {
          long caps = Long.parseUnsignedLong(line.substring(7).trim(), 16);
          return (caps & (1L << CAP_IPC_LOCK)) != 0;
        } catch (NumberFormatException e) {
          return false;
        }
      }
    }
    return false;
  }

  /** Whether registration may be refused for want of lockable memory. */
  public boolean tooLow() {
    return !capIpcLock && softLimitBytes >= 0 && softLimitBytes < MIN_BYTES;
  }

  /** The limit in words: {@code "unlimited"}, {@code "8 MiB"}, {@code "64 KiB"}, or unknown. */
  public String describe() {
    if (softLimitBytes == Long.MAX_VALUE) {
      return "unlimited";
    }
    if (softLimitBytes < 0) {
      return "unknown";
    }
    if (softLimitBytes >= (1L << 20) && softLimitBytes % (1L << 20) == 0) {
      return (softLimitBytes >> 20) + " MiB";
    }
    return (softLimitBytes >> 10) + " KiB";
  }

  private static String readOrEmpty(Path p) {
    try {
      return Files.readString(p, StandardCharsets.UTF_8);
    } catch (IOException | RuntimeException e) {
      return "";
    }
  }
}
