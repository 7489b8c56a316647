package io.srdma.bench.transport;

/**
 * How sealed's bench sender waits for the host to deliver: it keeps looking without blocking for up
 * to {@link #BUSY_NANOS} — {@link #SPINS} busy spins, then spins with a yield every {@link
 * #YIELD_EVERY} looks, so a thread waiting for this core still gets it — and only then blocks until
 * the host's receiver thread wakes it, as Aeron's {@code BackoffIdleStrategy} spins and yields
 * before it parks. On two vCPUs a blocked sender costs the host's opener a wake-up (a futex syscall
 * and an inter-processor interrupt, microseconds in a VM) once per half window, 9 % of the opener
 * at 64 B, and leaves the writer's core idle while the wake-up travels. Interleaved rounds in one
 * JVM (performance.md session 39): 64 B on loopback 0.98M → 1.23M msg/s, on soft 0.76M → 0.90M;
 * plain-write's sender, whose credits arrive through its completion queue, was no faster with it
 * (1.37M → 1.25M), so it keeps the queue's own wait: each transport waits the way it is fastest.
 *
 * <p>One instance per sending thread; not thread-safe. Allocates nothing.
 */
final class SenderWait {
  /** How long a wait stays busy (spinning, yielding now and then) before the sender blocks. */
  static final long BUSY_NANOS = 200_000;

  /** Busy spins before the wait starts yielding now and then. */
  static final int SPINS = 100;

  /** After {@link #SPINS}: one look in this many yields, the others spin. */
  static final int YIELD_EVERY = 64;

  private long since;
  private int looks;

  /** Starts a wait: the next {@link #stayBusy()} is its first look. */
  void start() {
    looks = 0;
  }

  /**
   * Idles once, briefly.
   *
   * @return true while the sender should look again without blocking; false once the busy time is
   *     spent (block now)
   */
  boolean stayBusy() {
    if (looks == 0) {
      since = System.nanoTime();
    }
    if (looks++ < SPINS) {
      Thread.onSpinWait();
      return true;
    }
    if (System.nanoTime() - since >= BUSY_NANOS) {
      return false;
    }
    if (looks % YIELD_EVERY == 0) {
      Thread.yield();
    } else {
      Thread.onSpinWait();
    }
    return true;
  }
}
