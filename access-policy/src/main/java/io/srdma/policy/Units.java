package io.srdma.policy;

import java.time.Duration;
import java.util.OptionalLong;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/** Parses sizes ({@code 64MiB}) and durations ({@code 10m}) as written in policy files. */
public final class Units {
  private static final Pattern SIZE =
      Pattern.compile("([0-9]{1,19})\\s*(B|KiB|MiB|GiB|TiB|kB|MB|GB|TB)?");
  private static final Pattern DURATION = Pattern.compile("([0-9]{1,12})(ms|s|m|h|d)");

  private Units() {}

  /**
   * Parses a size: a whole number with an optional unit B, KiB, MiB, GiB, TiB, kB, MB, GB, TB.
   *
   * @param text e.g. {@code 64MiB}
   * @return bytes, or empty if malformed, zero or overflowing
   */
  public static OptionalLong parseSize(String text) {
    Matcher m = SIZE.matcher(text);
    if (!m.matches()) {
      return OptionalLong.empty();
    }
    try {
      long n = Long.parseLong(m.group(1));
      long unit = sizeUnit(m.group(2));
      long bytes = Math.multiplyExact(n, unit);
      return bytes > 0 ? OptionalLong.of(bytes) : OptionalLong.empty();
    } catch (ArithmeticException | NumberFormatException e) {
      return OptionalLong.empty();
    }
  }

  /**
   * Parses a duration: a whole number with a unit ms, s, m, h or d.
   *
   * @param text e.g. {@code 10m}
   * @return the positive duration, or null if malformed or zero
   */
  public static Duration parseDuration(String text) {
    Matcher m = DURATION.matcher(text);
    if (!m.matches()) {
      return null;
    }
    long n = Long.parseLong(m.group(1));
    if (n == 0) {
      return null;
    }
    return switch (m.group(2)) {
      case "ms" -> Duration.ofMillis(n);
      case "s" -> Duration.ofSeconds(n);
      case "m" -> Duration.ofMinutes(n);
      case "h" -> Duration.ofHours(n);
      default -> Duration.ofDays(n);
    };
  }

  private static long sizeUnit(String unit) {
    if (unit == null) {
      return 1;
    }
    return switch (unit) {
      case "B" -> 1;
      case "KiB" -> 1L << 10;
      case "MiB" -> 1L << 20;
      case "GiB" -> 1L << 30;
      case "TiB" -> 1L << 40;
      case "kB" -> 1_000L;
      case "MB" -> 1_000_000L;
      case "GB" -> 1_000_000_000L;
      default -> 1_000_000_000_000L;
    };
  }
}
