package io.srdma.cli.bench;

import java.time.Duration;
import java.util.Locale;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import picocli.CommandLine;

/** {@code 500ms}, {@code 3s}, {@code 1m}, {@code 0}, or ISO-8601 {@code PT3S}. */
final class DurationConverter implements CommandLine.ITypeConverter<Duration> {
  private static final Pattern TIME =
      Pattern.compile("(\\d{1,9})\\s*(ms|s|m|min)?", Pattern.CASE_INSENSITIVE);

  @Override
  public Duration convert(String value) {
    String v = value.trim();
    Matcher m = TIME.matcher(v);
    if (m.matches()) {
      long n = Long.parseLong(m.group(1));
      String unit = m.group(2) == null ? "s" : m.group(2).toLowerCase(Locale.ROOT);
      return switch (unit) {
        case "ms" -> Duration.ofMillis(n);
        case "m", "min" -> Duration.ofMinutes(n);
        default -> Duration.ofSeconds(n);
      };
    }
    try {
      return Duration.parse(v);
    } catch (RuntimeException e) {
      throw new CommandLine.TypeConversionException(
          "'" + value + "' is not a duration (like 500ms, 3s, 1m)");
    }
  }
}
