package io.srdma.cli;

import io.srdma.policy.Units;
import picocli.CommandLine;

/**
 * Reads a size option ({@code --size 64KiB}, {@code --sizes 64,10GB}) with the project's one size
 * grammar, {@link Units#size(String)}: {@code kB/MB/GB} are powers of 1000, {@code KiB/MiB/GiB}
 * powers of 1024, {@code k}/{@code K} alone are refused as ambiguous (docs/units.md). A bad size
 * becomes picocli's usage error (exit 2) carrying the parser's one-line reason. Stateless and
 * thread-safe.
 */
public final class SizeConverter implements CommandLine.ITypeConverter<Long> {
  @Override
  public Long convert(String value) {
    try {
      return Units.size(value);
    } catch (IllegalArgumentException e) {
      throw new CommandLine.TypeConversionException(e.getMessage());
    }
  }

  /** The same for an {@code int} option: refuses sizes of 2 GiB and more. */
  public static final class Int implements CommandLine.ITypeConverter<Integer> {
    @Override
    public Integer convert(String value) {
      long bytes = new SizeConverter().convert(value);
      if (bytes > Integer.MAX_VALUE) {
        throw new CommandLine.TypeConversionException(
            "'"
                + value.strip()
                + "' is too large here: at most "
                + Integer.MAX_VALUE
                + " bytes (2 GiB - 1)");
      }
      return (int) bytes;
    }
  }
}
