package io.srdma.bench.transport;

import java.time.Duration;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;

/** The receiving side of one run on its own thread, and bounded waits for it. */
final class ReceiverThread {
  /** The loop a receiver runs; may throw anything. */
  @FunctionalInterface
  interface Loop {
    void run() throws Exception;
  }

  private ReceiverThread() {}

  /**
   * Starts {@code loop} on a new daemon thread.
   *
   * @param onFailure runs when the loop fails (close the connection so a blocked sender wakes)
   * @return completes when the loop returns, exceptionally when it throws
   */
  static CompletableFuture<Void> start(String name, Loop loop, Runnable onFailure) {
    return start(name, CpuSplit.NONE, loop, onFailure);
  }

  /**
   * Starts {@code loop} on a new daemon thread that first pins itself to the receiver's CPUs of
   * {@code cpus} (a pin that fails fails the run).
   *
   * @param onFailure runs when the loop or the pin fails (close the connection so a blocked sender
   *     wakes)
   * @return completes when the loop returns, exceptionally when it throws
   */
  static CompletableFuture<Void> start(String name, CpuSplit cpus, Loop loop, Runnable onFailure) {
    CompletableFuture<Void> done = new CompletableFuture<>();
    Thread t =
        new Thread(
            () -> {
              try {
                cpus.pinReceiver();
                loop.run();
                done.complete(null);
              } catch (Throwable e) {
                done.completeExceptionally(e);
                onFailure.run();
              }
            },
            name);
    t.setDaemon(true);
    t.start();
    return done;
  }

  /**
   * Waits for {@code future}; rethrows its failure; a {@link TimeoutException} names {@code what}.
   */
  static <T> T await(CompletableFuture<T> future, Duration deadline, String what) throws Exception {
    try {
      return future.get(deadline.toMillis(), TimeUnit.MILLISECONDS);
    } catch (TimeoutException e) {
      throw new TimeoutException(what + " did not finish within " + deadline);
    } catch (ExecutionException e) {
      if (e.getCause() instanceof Exception cause) {
        throw cause;
      }
      throw e;
    }
  }

  /** If {@code future} failed, its cause; else {@code fallback}. */
  static Exception failureOr(CompletableFuture<?> future, Exception fallback) {
    if (future.isCompletedExceptionally()) {
      try {
        future.join();
      } catch (RuntimeException e) {
        Throwable c = e.getCause() == null ? e : e.getCause();
        if (c instanceof Exception cause) {
          if (cause != fallback) { // one failure reported through both paths is not its own cause
            cause.addSuppressed(fallback);
          }
          return cause;
        }
      }
    }
    return fallback;
  }
}
