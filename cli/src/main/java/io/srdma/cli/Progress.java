package io.srdma.cli;

import java.io.PrintWriter;

/**
 * The phases of long work, one line each: {@code creating the dev CA ... done (0.8 s)}. On a
 * terminal a spinner turns at the end of the running phase's line, so a slow step is visibly alive;
 * elsewhere (a pipe, a file, a test) each phase is printed once and completed on the same line.
 * Thread-safe: the spinner's thread and the caller print under one lock.
 */
final class Progress implements AutoCloseable {
  private static final String FRAMES = "|/-\\";
  private static final long TICK_MS = 150;

  private final PrintWriter out;
  private final boolean animate;
  private final Thread spinner;
  private String phase;
  private long started;
  private int frame;
  private boolean spinning;
  private boolean closed;

  /**
   * @param out where the phases go
   * @param animate whether to turn a spinner (only for a terminal)
   */
  Progress(PrintWriter out, boolean animate) {
    this.out = out;
    this.animate = animate;
    this.spinner = animate ? new Thread(this::spin, "srdma-progress") : null;
    if (spinner != null) {
      spinner.setDaemon(true);
      spinner.start();
    }
  }

  /** Ends the running phase (if any) and starts {@code what}. */
  synchronized void phase(String what) {
    finish();
    phase = what;
    started = System.nanoTime();
    out.print(what + " ... ");
    out.flush();
  }

  /** Ends the running phase with {@code done (N s)}. */
  synchronized void done() {
    finish();
  }

  private void finish() {
    if (phase == null) {
      return;
    }
    unspin();
    out.printf("done (%.1f s)%n", (System.nanoTime() - started) / 1e9);
    out.flush();
    phase = null;
  }

  private void unspin() {
    if (spinning) {
      out.print("\b \b");
      spinning = false;
    }
  }

  private void spin() {
    try {
      while (true) {
        Thread.sleep(TICK_MS);
        synchronized (this) {
          if (closed) {
            return;
          }
          if (phase != null) {
            unspin();
            out.print(FRAMES.charAt(frame++ % FRAMES.length()));
            out.flush();
            spinning = true;
          }
        }
      }
    } catch (InterruptedException e) {
      // closed
    }
  }

  /**
   * Stops the spinner, marking a phase still running as {@code failed} (the work ended without
   * {@link #done}); waits at most a second for the spinner's thread.
   */
  @Override
  public void close() {
    synchronized (this) {
      if (phase != null) {
        unspin();
        out.println("failed");
        out.flush();
        phase = null;
      }
      closed = true;
    }
    if (spinner != null) {
      spinner.interrupt();
      try {
        spinner.join(1_000);
      } catch (InterruptedException e) {
        Thread.currentThread().interrupt();
      }
    }
  }

  /** Whether a spinner suits this process's stdout: a terminal, and not a dumb one. */
  static boolean terminal() {
    java.io.Console console = System.console();
    if (console == null || "dumb".equals(System.getenv("TERM"))) {
      return false;
    }
    try {
      // JDK 22+ has a console for redirected streams too; isTerminal() tells them apart
      return (Boolean) java.io.Console.class.getMethod("isTerminal").invoke(console);
    } catch (ReflectiveOperationException e) {
      return true; // before JDK 22 a console is a terminal
    }
  }
}
