package io.srdma.testsupport;

import static org.junit.jupiter.api.Assumptions.assumeTrue;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.function.Consumer;

/**
 * Files that are not what their reader expects, for the tests of a bounded, checked open (a FIFO at
 * a configuration path must be refused, never waited on): a FIFO ({@link #mkfifo}), a file swapped
 * for a FIFO between its reader's check and its open ({@link #fifoSwapOnce}, for the reader's
 * {@code beforeOpen} hook), and an honest file reached through Kubernetes' ConfigMap links ({@link
 * #configMapLink}). Needs JUnit Jupiter on the test's class path (a missing {@code mkfifo} skips
 * the test). Stateless; each {@link FifoSwap} may be called from any thread.
 */
public final class HostileFiles {
  /** Far above the opens' 10 s bound: only a hang reaches it. */
  public static final Duration HANG_BOUND = Duration.ofSeconds(60);

  private HostileFiles() {}

  /**
   * Makes a FIFO at {@code p} with {@code mkfifo}; skips the test (an assumption) where that fails.
   */
  public static void mkfifo(Path p) throws IOException, InterruptedException {
    Process proc = new ProcessBuilder("mkfifo", p.toString()).inheritIO().start();
    boolean done = proc.waitFor(30, TimeUnit.SECONDS);
    if (!done) {
      proc.destroyForcibly();
    }
    assumeTrue(done && proc.exitValue() == 0, "needs mkfifo");
  }

  /**
   * A hook for a reader's {@code beforeOpen} that, the first time it is called for {@code file}
   * (after the reader checked it, before it opens it), replaces {@code file} by a FIFO.
   */
  public static FifoSwap fifoSwapOnce(Path file) {
    return new FifoSwap(file);
  }

  /**
   * Kubernetes' ConfigMap layout in {@code dir}: {@code dir/name -> ..data/name}, {@code ..data ->
   * ..2026_12_06/}, and {@code content} in {@code ..2026_12_06/name}.
   *
   * @return the link {@code dir/name}, the path an operator names
   */
  public static Path configMapLink(Path dir, String name, byte[] content) throws IOException {
    Path real = Files.createDirectory(dir.resolve("..2026_12_06"));
    Files.write(real.resolve(name), content);
    Files.createSymbolicLink(dir.resolve("..data"), real.getFileName());
    return Files.createSymbolicLink(dir.resolve(name), Path.of("..data", name));
  }

  /** See {@link #fifoSwapOnce}; thread-safe (it swaps at most once). */
  public static final class FifoSwap implements Consumer<Path> {
    private final Path file;
    private final AtomicBoolean swapped = new AtomicBoolean();

    private FifoSwap(Path file) {
      this.file = file;
    }

    @Override
    public void accept(Path p) {
      if (p.equals(file) && swapped.compareAndSet(false, true)) {
        try {
          Files.delete(file);
          mkfifo(file);
        } catch (IOException e) {
          throw new UncheckedIOException(e);
        } catch (InterruptedException e) {
          Thread.currentThread().interrupt();
          throw new IllegalStateException("interrupted making a FIFO at " + file, e);
        }
      }
    }

    /** Whether the file was swapped (the reader reached its open). */
    public boolean ran() {
      return swapped.get();
    }
  }
}
