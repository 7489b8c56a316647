package io.srdma.cli;

import picocli.CommandLine.Help.Ansi;

/**
 * Colour for results on a terminal: {@code ok} green, {@code FAIL} red, {@code skip} yellow. Off
 * when stdout is no terminal (a pipe, a file), when {@code NO_COLOR} is set (no-color.org) and
 * wherever picocli's ANSI detection says so ({@code -Dpicocli.ansi=false}). Thread-safe.
 */
final class Style {
  private Style() {}

  /** Whether this process colours its output. */
  static boolean enabled() {
    String noColor = System.getenv("NO_COLOR");
    return (noColor == null || noColor.isEmpty()) && Ansi.AUTO.enabled();
  }

  /** {@code mark} left-aligned in {@code width} columns, coloured when {@link #enabled}. */
  static String mark(String mark, int width) {
    String pad = " ".repeat(Math.max(0, width - mark.length()));
    if (!enabled()) {
      return mark + pad;
    }
    String style =
        switch (mark) {
          case "ok" -> "fg(green)";
          case "FAIL" -> "bold,fg(red)";
          case "skip" -> "fg(yellow)";
          default -> null;
        };
    return (style == null ? mark : Ansi.ON.string("@|" + style + " " + mark + "|@")) + pad;
  }
}
