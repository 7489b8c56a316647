package io.srdma.policy;

import java.time.Duration;
import java.util.Locale;
import java.util.OptionalLong;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * The one size grammar of the project (policy files, {@code srdma serve} configuration and every
 * command's size option; see docs/units.md) and the duration grammar of policy files.
 *
 * <p>A size is a whole number of bytes with an optional unit, at most one space between them:
 *
 * <ul>
 *   <li>{@code B} or no unit: bytes;
 *   <li>{@code kB}, {@code MB}, {@code GB}, {@code TB}, {@code PB}, {@code EB}: powers of 1000;
 *   <li>{@code KiB}, {@code MiB}, {@code GiB}, {@code TiB}, {@code PiB}, {@code EiB}: powers of
 *       1024.
 * </ul>
 *
 * Units are case-sensitive. Ambiguous units ({@code k}, {@code K}, {@code KB}, {@code m}, {@code
 * mb}, ...) are refused with a message naming both readings, never guessed. Fractions, signs and
 * values over {@link Long#MAX_VALUE} bytes are refused, never rounded or wrapped.
 *
 * <p>All methods are static, stateless and thread-safe.
 */
public final class Units {
  /** The accepted size units, for error messages and help texts. */
  public static final String SIZE_UNITS =
      "B; kB, MB, GB, TB, PB, EB (powers of 1000); KiB, MiB, GiB, TiB, PiB, EiB (powers of 1024)";

  private static final Pattern SIZE = Pattern.compile("([0-9]+) ?([A-Za-z]*)");
  private static final Pattern DURATION = Pattern.compile("([0-9]{1,12})(ms|s|m|h|d)");
  private static final String[] DECIMAL = {"B", "kB", "MB", "GB", "TB", "PB", "EB"};
  private static final String[] BINARY = {"B", "KiB", "MiB", "GiB", "TiB", "PiB", "EiB"};
  private static final int ECHO_LIMIT = 40;

  private Units() {}

  /**
   * Parses a size such as {@code 4096}, {@code 64KiB}, {@code 10GB} or {@code 3 B}.
   *
   * @param text the size; leading and trailing blanks are ignored
   * @return bytes, zero or more
   * @throws IllegalArgumentException with a one-line message naming the text and what is wrong (not
   *     a whole number, unknown or ambiguous unit, too large)
   */
  public static long size(String text) {
    if (text == null || text.isBlank()) {
      throw new IllegalArgumentException("empty size; write a whole number of bytes such as 4096");
    }
    String t = text.strip();
    Matcher m = SIZE.matcher(t);
    if (!m.matches()) {
      throw new IllegalArgumentException(
          "'"
              + echo(t)
              + "' is not a size: write a whole number of bytes with an optional unit ("
              + SIZE_UNITS
              + "), e.g. 4096, 64KiB or 10GB");
    }
    String digits = m.group(1);
    String unitText = m.group(2);
    long unit = unit(unitText);
    if (unit == 0) {
      throw new IllegalArgumentException(unknownUnit(t, digits, unitText));
    }
    try {
      return Math.multiplyExact(Long.parseLong(digits), unit);
    } catch (ArithmeticException | NumberFormatException e) {
      throw new IllegalArgumentException(
          "'" + echo(t) + "' is too large: sizes go up to " + Long.MAX_VALUE + " bytes (8 EiB - 1)",
          e);
    }
  }

  /**
   * Parses a positive size, as policy files and the serve configuration need.
   *
   * @param text e.g. {@code 64MiB}
   * @return bytes, or empty if malformed, zero or overflowing (use {@link #size(String)} for the
   *     reason)
   */
  public static OptionalLong parseSize(String text) {
    try {
      long bytes = size(text);
      return bytes > 0 ? OptionalLong.of(bytes) : OptionalLong.empty();
    } catch (IllegalArgumentException e) {
      return OptionalLong.empty();
    }
  }

  /**
   * Why {@code text} is not a positive size, as one line, or null if it is one.
   *
   * @param text the size as written
   * @return the reason, or null
   */
  public static String sizeProblem(String text) {
    try {
      return size(text) > 0 ? null : "a size must be more than 0 bytes";
    } catch (IllegalArgumentException e) {
      return e.getMessage();
    }
  }

  /**
   * Formats bytes in the same grammar, exactly: the unit that needs the fewest digits among those
   * that divide it exactly, with a space: {@code 64 KiB}, {@code 10 GB}, {@code 1 kB}, {@code 5 B}.
   * {@link #size(String)} reads the result back to the same value.
   *
   * @param bytes zero or more
   * @return e.g. {@code 64 KiB}
   */
  public static String formatSize(long bytes) {
    if (bytes < 0) {
      throw new IllegalArgumentException("negative size: " + bytes);
    }
    String best = bytes + " B";
    if (bytes == 0) {
      return best;
    }
    for (int i = BINARY.length - 1; i >= 1; i--) {
      long b = 1L << (10 * i);
      long d = pow1000(i);
      String candidate = null;
      if (bytes % b == 0) {
        candidate = bytes / b + " " + BINARY[i];
      }
      if (bytes % d == 0 && (candidate == null || bytes / d < bytes / b)) {
        candidate = bytes / d + " " + DECIMAL[i];
      }
      if (candidate != null && candidate.length() < best.length()) {
        best = candidate;
      }
    }
    return best;
  }

  /**
   * The longest duration {@link #parseDuration} accepts: 36,500 days (100 years). Longer ones mean
   * nothing for a grant or a timeout, and past about 10^8 days their milliseconds overflow a long
   * (and an instant that far ahead, the calendar).
   */
  public static final Duration MAX_DURATION = Duration.ofDays(36_500);

  /**
   * Parses a duration: a whole number with a unit ms, s, m, h or d, at most {@link #MAX_DURATION}.
   *
   * @param text e.g. {@code 10m}
   * @return the positive duration, or null if malformed, zero or over {@link #MAX_DURATION}
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
    Duration d =
        switch (m.group(2)) {
          case "ms" -> Duration.ofMillis(n);
          case "s" -> Duration.ofSeconds(n);
          case "m" -> Duration.ofMinutes(n);
          case "h" -> Duration.ofHours(n);
          default -> Duration.ofDays(n);
        };
    return d.compareTo(MAX_DURATION) > 0 ? null : d;
  }

  /** Bytes per unit, or 0 if the unit is not one of ours. */
  private static long unit(String unit) {
    if (unit.isEmpty()) {
      return 1;
    }
    for (int i = 0; i < DECIMAL.length; i++) {
      if (DECIMAL[i].equals(unit)) {
        return pow1000(i);
      }
      if (BINARY[i].equals(unit)) {
        return 1L << (10 * i);
      }
    }
    return 0;
  }

  private static long pow1000(int exponent) {
    long p = 1;
    for (int i = 0; i < exponent; i++) {
      p *= 1000;
    }
    return p;
  }

  private static String unknownUnit(String text, String digits, String unit) {
    String u = unit.toLowerCase(Locale.ROOT);
    String prefix = u.substring(0, 1);
    int i = "bkmgtpe".indexOf(prefix);
    boolean looksLikeOurs =
        i > 0 && (u.length() == 1 || u.equals(prefix + "b") || u.equals(prefix + "ib"));
    if (looksLikeOurs) {
      return "'"
          + echo(text)
          + "' has an ambiguous or misspelt unit '"
          + echo(unit)
          + "': write "
          + echo(digits)
          + DECIMAL[i]
          + " (powers of 1000) or "
          + echo(digits)
          + BINARY[i]
          + " (powers of 1024); units are "
          + SIZE_UNITS;
    }
    return "'" + echo(text) + "' has an unknown unit '" + echo(unit) + "'; units are " + SIZE_UNITS;
  }

  /** The text as it may appear in a one-line message: short, printable ASCII. */
  private static String echo(String text) {
    StringBuilder b = new StringBuilder();
    for (int i = 0; i < text.length() && i < ECHO_LIMIT; i++) {
      char c = text.charAt(i);
      b.append(c >= 0x20 && c < 0x7f ? c : '?');
    }
    if (text.length() > ECHO_LIMIT) {
      b.append("...");
    }
    return b.toString();
  }
}
