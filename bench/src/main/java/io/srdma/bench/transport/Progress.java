package io.srdma.bench.transport;

import java.io.PrintWriter;
import java.util.Locale;

/**
 * Progress on stderr: a bar redrawn in place when stderr is a terminal (or {@code --progress bar}),
 * one plain line per phase otherwise ({@code lines}), or nothing ({@code none}).
 */
public final class Progress {
  /** How progress is shown. */
  public enum Mode {
    /** {@code bar} on a terminal, {@code lines} otherwise. */
    AUTO,
    BAR,
    LINES,
    NONE
  }

  private static final int WIDTH = 30;
  private final PrintWriter err;
  private final Mode mode;
  private final int total;
  private int done;
  private int lastLength;

  public Progress(PrintWriter err, Mode mode, int total) {
    this.err = err;
    this.mode = mode == Mode.AUTO ? (onTerminal() ? Mode.BAR : Mode.LINES) : mode;
    this.total = Math.max(1, total);
  }

  /**
   * Whether the JVM runs on a terminal. Up to JDK 21 that is {@code System.console() != null}; from
   * JDK 22 the console exists even when redirected and {@code Console.isTerminal()} (absent in 17,
   * hence reflection) tells.
   */
  @SuppressWarnings("SystemConsoleNull") // handled: isTerminal() is asked where it exists
  public static boolean onTerminal() {
    java.io.Console console = System.console();
    if (console == null) {
      return false;
    }
    try {
      return (Boolean) java.io.Console.class.getMethod("isTerminal").invoke(console);
    } catch (ReflectiveOperationException e) {
      return true;
    }
  }

  /** The mode in effect ({@code AUTO} resolved). */
  Mode mode() {
    return mode;
  }

  /** Shows what is running now. */
  void phase(String transport, int size, String phase) {
    String what = transport + " " + Report.size(size) + ": " + phase;
    switch (mode) {
      case BAR -> {
        int filled = done * WIDTH / total;
        String line =
            String.format(
                Locale.ROOT,
                "[%s%s] %d/%d %s",
                "#".repeat(filled),
                " ".repeat(WIDTH - filled),
                done,
                total,
                what);
        err.print("\r" + line + " ".repeat(Math.max(0, lastLength - line.length())));
        lastLength = line.length();
        err.flush();
      }
      case LINES -> {
        err.printf(Locale.ROOT, "bench [%d/%d] %s%n", done + 1, total, what);
        err.flush();
      }
      default -> {}
    }
  }

  /** One transport at one size is finished. */
  void stepDone() {
    done++;
  }

  /** A message that must be seen (unavailable transport, failure), on its own line. */
  void note(String message) {
    if (mode == Mode.BAR && lastLength > 0) {
      err.print("\r" + " ".repeat(lastLength) + "\r");
      lastLength = 0;
    }
    err.println(message);
    err.flush();
  }

  /** Ends the bar. */
  public void finish() {
    if (mode == Mode.BAR && lastLength > 0) {
      err.print("\r" + " ".repeat(lastLength) + "\r");
      err.flush();
    }
  }
}
