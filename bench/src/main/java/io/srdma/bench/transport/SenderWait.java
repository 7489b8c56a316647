package io.srdma.bench.transport;

/**
 * How sealed's bench sender waits for the host to deliver: while waits are short it keeps looking
 * without blocking for up to {@link #BUSY_NANOS} — {@link #SPINS} busy spins, then spins with a
 * yield every {@link #YIELD_EVERY} looks, so a thread waiting for this core still gets it — and
 * only then blocks until the host's receiver thread wakes it, as Aeron's {@code
 * BackoffIdleStrategy} spins and yields before it parks. On two vCPUs a blocked sender costs the
 * host's opener a wake-up (a futex syscall and an inter-processor interrupt, microseconds in a VM)
 * once per half window, 9 % of the opener at 64 B, and leaves the writer's core idle while the
 * wake-up travels. Once a wait outlasted the busy time (large messages: a half window of 1 MiB
 * messages takes milliseconds) the next ones spin only {@link #SPINS} times before blocking, and
 * one in {@link #PROBE_EVERY} tries the busy time again: a sender busy through long waits only
 * takes the core the host's threads need (1 MiB on soft, interleaved rounds: 1.11x Netty without,
 * 1.01x with). Interleaved rounds in one JVM (performance.md session 39): 64 B on loopback 0.98M →
 * 1.23M msg/s, on soft 0.76M → 0.90M. plain-write's sender, whose credits arrive through its
 * completion queue, was no faster with it (1.37M → 1.25M at 64 B), so its throughput runs keep the
 * queue's own wait: each transport waits the way it is fastest. Its latency runs, where every
 * message waits for the one before it to travel both ways, wait this way at both ends (the sender's
 * credit, the receiver's message; performance.md session 42).
 *
 * <p>One instance per waiting thread; not thread-safe. Allocates nothing.
 */
final class SenderWait {
  /** How long a wait stays busy (spinning, yielding now and then) before the sender blocks. */
  static final long BUSY_NANOS = 200_000;

  /** Busy spins before the wait starts yielding now and then (or blocks, after a long wait). */
  static final int SPINS = 100;

  /** After {@link #SPINS}: one look in this many yields, the others spin. */
  static final int YIELD_EVERY = 64;

  /** After a wait that outlasted the busy time: one wait in this many is busy again. */
  static final int PROBE_EVERY = 16;

  private long since;
  private int looks;
  private long budget = BUSY_NANOS; // of the current wait
  private boolean blocked; // the current wait outlasted its busy time
  private boolean longWaits; // the last wait that could tell outlasted the busy time
  private int sinceProbe;

  /** Starts a wait: the next {@link #stayBusy()} is its first look. */
  void start() {
    if (budget == BUSY_NANOS) {
      longWaits = blocked; // a busy wait tells whether waits are long
    } else if (!blocked) {
      longWaits = false; // over within the spins: short
    }
    budget = !longWaits || ++sinceProbe % PROBE_EVERY == 0 ? BUSY_NANOS : 0;
    looks = 0;
    blocked = false;
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
    if (System.nanoTime() - since >= budget) {
      blocked = true;
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
