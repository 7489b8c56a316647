package io.srdma.verbs;

import java.util.concurrent.TimeUnit;
import java.util.concurrent.locks.LockSupport;

/**
 * How a thread that polls for work waits when a poll found none: it spins a few times ({@link
 * Thread#onSpinWait()}), then yields a few times, then parks for a period that doubles from {@code
 * minParkNanos} up to {@code maxParkNanos} (Aeron's {@code BackoffIdleStrategy}). Spinning first
 * keeps the latency of a busy poller at a memory access instead of a wake-up; parking afterwards
 * keeps an idle one from burning a core.
 *
 * <p>Use: call {@link #idle(int)} with the amount of work the last poll did (0 = none) after every
 * poll, or {@link #idle()} after a poll that found nothing and {@link #reset()} after one that
 * found work. A caller that can block on something better than a timed park (a selector, say) asks
 * {@link #shouldBlock()} and blocks there instead of calling {@link #idle()} at the park phase.
 *
 * <p>Not thread-safe: one instance per polling thread. Allocates nothing after construction.
 */
public final class BackoffIdleStrategy {
  /** Spins before yielding (Aeron's default; more only helps on cores nobody else wants). */
  public static final long DEFAULT_MAX_SPINS = 10;

  /** Yields after the spins. */
  public static final long DEFAULT_MAX_YIELDS = 5;

  /** First park, in nanoseconds. */
  public static final long DEFAULT_MIN_PARK_NANOS = TimeUnit.MICROSECONDS.toNanos(1);

  /** Longest park, in nanoseconds. */
  public static final long DEFAULT_MAX_PARK_NANOS = TimeUnit.MILLISECONDS.toNanos(1);

  private final long maxSpins;
  private final long maxYields;
  private final long minParkNanos;
  private final long maxParkNanos;
  private long spins;
  private long yields;
  private long parkNanos;

  /** With the default bounds. */
  public BackoffIdleStrategy() {
    this(DEFAULT_MAX_SPINS, DEFAULT_MAX_YIELDS, DEFAULT_MIN_PARK_NANOS, DEFAULT_MAX_PARK_NANOS);
  }

  /**
   * @param maxSpins spins before yielding (>= 0)
   * @param maxYields yields before parking (>= 0)
   * @param minParkNanos first park (>= 1)
   * @param maxParkNanos longest park (>= minParkNanos)
   * @throws IllegalArgumentException on bounds out of range
   */
  public BackoffIdleStrategy(long maxSpins, long maxYields, long minParkNanos, long maxParkNanos) {
    if (maxSpins < 0 || maxYields < 0 || minParkNanos < 1 || maxParkNanos < minParkNanos) {
      throw new IllegalArgumentException(
          "bad idle bounds: spins "
              + maxSpins
              + ", yields "
              + maxYields
              + ", park "
              + minParkNanos
              + ".."
              + maxParkNanos
              + " ns");
    }
    this.maxSpins = maxSpins;
    this.maxYields = maxYields;
    this.minParkNanos = minParkNanos;
    this.maxParkNanos = maxParkNanos;
    reset();
  }

  /**
   * Idles once if {@code workCount} is 0, else resets.
   *
   * @param workCount what the last poll did
   */
  public void idle(int workCount) {
    if (workCount > 0) {
      reset();
    } else {
      idle();
    }
  }

  /** One idle step: spin, yield or park, depending on how long the poller has been idle. */
  public void idle() {
    if (spins < maxSpins) {
      spins++;
      Thread.onSpinWait();
    } else if (yields < maxYields) {
      yields++;
      Thread.yield();
    } else {
      LockSupport.parkNanos(parkNanos);
      parkNanos = Math.min(parkNanos << 1, maxParkNanos);
    }
  }

  /** True once spinning and yielding are over: the next {@link #idle()} would park. */
  public boolean shouldBlock() {
    return spins >= maxSpins && yields >= maxYields;
  }

  /** Back to spinning: call after a poll that found work. */
  public void reset() {
    spins = 0;
    yields = 0;
    parkNanos = minParkNanos;
  }

  @Override
  public String toString() {
    return "BackoffIdleStrategy{spins="
        + maxSpins
        + ", yields="
        + maxYields
        + ", park="
        + minParkNanos
        + ".."
        + maxParkNanos
        + "ns}";
  }
}
