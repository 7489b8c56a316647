package io.srdma.cluster;

import static org.junit.jupiter.api.Assertions.fail;

import java.time.Duration;
import java.util.function.BooleanSupplier;

/** Bounded waits: poll a condition until it holds or the limit passes (then fail). */
final class Await {
  private Await() {}

  /**
   * Waits for a condition.
   *
   * @return how long it took
   */
  static Duration until(Duration limit, String what, BooleanSupplier condition) {
    long start = System.nanoTime();
    long deadline = start + limit.toNanos();
    while (true) {
      if (condition.getAsBoolean()) {
        return Duration.ofNanos(System.nanoTime() - start);
      }
      if (System.nanoTime() - deadline > 0) {
        fail(what + " did not happen within " + limit);
      }
      try {
        Thread.sleep(5);
      } catch (InterruptedException e) {
        Thread.currentThread().interrupt();
        fail("interrupted waiting for " + what);
      }
    }
  }
}
