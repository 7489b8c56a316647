package io.srdma.host;

import java.util.concurrent.TimeUnit;

/**
 * One session's budget of grant requests: a token bucket of {@link #BURST} requests that refills at
 * {@link #PER_SECOND} a second. A request past it is refused ({@code GRANT_DENIED RATE_LIMITED})
 * before the policy, the device or the audit log does any work for it, so a peer cannot make the
 * host bind windows and write (and force to disk) audit lines as fast as it can send frames. Also
 * says which denials are audited: the first {@link #AUDITED_DENIALS} of the session, one line each;
 * the rest are only counted ({@code denials} in the host's counters).
 *
 * <p>Not thread-safe: used on the session's strand only.
 */
final class GrantRequestBudget {
  /** Requests a session may send at once. */
  static final int BURST = 128;

  /** Requests a second a session may sustain. */
  static final int PER_SECOND = 64;

  /** Denied requests of one session audited one line each; the rest only counted. */
  static final int AUDITED_DENIALS = 32;

  private static final long NANOS_PER_TOKEN = TimeUnit.SECONDS.toNanos(1) / PER_SECOND;

  private long tokens = BURST;
  private long refilledAt;
  private int denials;

  /**
   * @param nowNanos {@link System#nanoTime()} at the session's start
   */
  GrantRequestBudget(long nowNanos) {
    refilledAt = nowNanos;
  }

  /**
   * Takes one request from the budget.
   *
   * @param nowNanos {@link System#nanoTime()} now
   * @return false when the budget is spent: refuse the request
   */
  boolean tryTake(long nowNanos) {
    long earned = (nowNanos - refilledAt) / NANOS_PER_TOKEN;
    if (earned > 0) {
      tokens = Math.min(BURST, tokens + earned);
      refilledAt = tokens == BURST ? nowNanos : refilledAt + earned * NANOS_PER_TOKEN;
    }
    if (tokens == 0) {
      return false;
    }
    tokens--;
    return true;
  }

  /** Records one denied request; true when it is one of those audited. */
  boolean auditDenial() {
    return ++denials <= AUDITED_DENIALS;
  }
}
