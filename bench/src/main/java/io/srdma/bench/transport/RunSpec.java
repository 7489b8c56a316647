package io.srdma.bench.transport;

import java.time.Duration;

/**
 * When a run stops and how it behaves.
 *
 * @param duration the sender stops starting new messages after this long
 * @param maxMessages the sender stops after this many counted messages; 0 = no limit
 * @param verify fold every message into a CRC32C on both sides (costs CPU; tests use it)
 * @param depth how many messages may be outstanding (sent, not yet delivered) at once, for
 *     transports that bound it themselves (plain-write: outstanding work requests)
 */
public record RunSpec(Duration duration, long maxMessages, boolean verify, int depth) {

  /** Validates. */
  public RunSpec {
    if (duration.isNegative() || duration.isZero()) {
      throw new IllegalArgumentException("duration must be positive: " + duration);
    }
    if (maxMessages < 0) {
      throw new IllegalArgumentException("maxMessages must be >= 0: " + maxMessages);
    }
    if (depth < 1) {
      throw new IllegalArgumentException("depth must be >= 1: " + depth);
    }
  }

  /** A run of exactly {@code messages} messages (with a generous time limit). */
  public static RunSpec ofMessages(long messages, boolean verify, int depth) {
    return new RunSpec(Duration.ofMinutes(10), messages, verify, depth);
  }

  /** How long after the sender stops a receiver may take to catch up before the run fails. */
  Duration drainDeadline() {
    return Duration.ofSeconds(60);
  }

  /**
   * How many more messages a sender that started at {@code startNanos} and sent {@code sent} may
   * start now: 0 once it should stop, else what {@code maxMessages} leaves (or {@link
   * Long#MAX_VALUE}). One clock read, for senders that fill a batch at a time.
   */
  long allowed(long startNanos, long sent) {
    if (stop(startNanos, sent)) {
      return 0;
    }
    return maxMessages > 0 ? maxMessages - sent : Long.MAX_VALUE;
  }

  /** Whether a sender that started at {@code startNanos} and sent {@code sent} should stop. */
  boolean stop(long startNanos, long sent) {
    return (maxMessages > 0 && sent >= maxMessages)
        || System.nanoTime() - startNanos >= duration.toNanos();
  }
}
