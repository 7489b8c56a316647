package io.srdma.host;

import java.util.concurrent.atomic.AtomicInteger;

/**
 * Counts one session's rejected records and write notifications (bad tag, replay, stale slot, empty
 * notification, out of bounds) and says what to do with each: audit the first few one line each,
 * count the rest quietly, and end the session once the limit is reached, so a peer cannot buy an
 * audit line per forged notification forever. Thread-safe.
 */
final class RejectionBudget {
  /** Rejections of one session audited one line each; the rest only counted. */
  static final int AUDITED = 8;

  /** What to do with one rejection. */
  enum Verdict {
    /** Audit it (one of the first {@link #AUDITED}). */
    AUDIT,
    /** Count it, no line: the budget's lines are spent. */
    QUIET,
    /** This rejection reaches the limit: end the session (exactly once). */
    END,
    /** The limit was reached before: the session is ending, nothing more to say. */
    SPENT
  }

  private final int limit;
  private final AtomicInteger count = new AtomicInteger();

  /**
   * @param limit rejections that end the session (at least 1)
   */
  RejectionBudget(int limit) {
    this.limit = limit;
  }

  /** Records one rejection. */
  Verdict reject() {
    int n = count.incrementAndGet();
    if (n == limit) {
      return Verdict.END;
    }
    if (n > limit) {
      return Verdict.SPENT;
    }
    return n <= AUDITED ? Verdict.AUDIT : Verdict.QUIET;
  }

  /** Rejections so far. */
  int count() {
    return count.get();
  }
}
