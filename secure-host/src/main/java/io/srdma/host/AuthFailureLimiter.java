package io.srdma.host;

import java.net.InetAddress;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicLong;
import java.util.function.LongSupplier;

/**
 * Refuses a remote address that failed authentication too often in the current minute (IPv6
 * addresses counted by /64, see {@link PendingHandshakes#bucket}). Thread-safe.
 *
 * <p>A connection that held a pre-authentication slot and closed without sending a byte costs the
 * share of its first-record deadline it used ({@link #heldSilently}): a TCP health check that
 * closes at once costs next to nothing, while an address that keeps its slots full by closing each
 * connection just before the deadline pays about a failure per connection, so it is refused after
 * {@code authFailuresPerMinute} of them instead of holding its slots forever at no cost.
 *
 * <p>Bounded in memory and in work per failure, whatever the number of addresses failing: above
 * {@link #SWEEP_ABOVE} tracked addresses, windows older than a minute are swept at most once a
 * second (one thread sweeps, the others go on), and at most {@link #MAX_TRACKED} addresses are
 * tracked. While the table is full of addresses that failed within the minute, failures from
 * addresses not yet in it are counted in {@link #untracked} but not limited: only an attacker
 * holding more than {@code MAX_TRACKED} addresses (or IPv6 /64s) gets there, and every handshake is
 * still bounded by the pre-authentication limits (handshakes per address and in all).
 */
final class AuthFailureLimiter {
  static final int SWEEP_ABOVE = 10_000;
  static final int MAX_TRACKED = 100_000;
  private static final long WINDOW_NANOS = 60_000_000_000L;
  private static final long SWEEP_EVERY_NANOS = 1_000_000_000L;

  /** What one failure costs; a silent close costs the fraction of the deadline it held. */
  static final long UNIT = 1_000_000L;

  private final long maxCharge;
  private final LongSupplier clock;
  private final ConcurrentHashMap<InetAddress, long[]> failures = new ConcurrentHashMap<>();
  private final AtomicLong nextSweep;
  private final AtomicLong untracked = new AtomicLong();

  AuthFailureLimiter(int maxFailuresPerMinute, LongSupplier nanoClock) {
    this.maxCharge = maxFailuresPerMinute * UNIT;
    this.clock = nanoClock;
    this.nextSweep = new AtomicLong(nanoClock.getAsLong());
  }

  boolean blocked(InetAddress from) {
    long[] w = failures.get(PendingHandshakes.bucket(from));
    if (w == null) {
      return false;
    }
    synchronized (w) {
      return clock.getAsLong() - w[0] < WINDOW_NANOS && w[1] >= maxCharge;
    }
  }

  /** A failed authentication, or a connection refused before it: costs one failure. */
  void failed(InetAddress from) {
    charge(from, UNIT);
  }

  /**
   * A connection that closed without sending a byte after holding its slot for {@code heldNanos} of
   * a first-record deadline of {@code deadlineNanos}: costs that fraction of a failure (at most
   * one).
   */
  void heldSilently(InetAddress from, long heldNanos, long deadlineNanos) {
    long held = Math.max(0, Math.min(heldNanos, deadlineNanos));
    long cost = (long) ((double) held / deadlineNanos * UNIT);
    if (cost > 0) {
      charge(from, cost);
    }
  }

  private void charge(InetAddress from, long cost) {
    InetAddress address = PendingHandshakes.bucket(from);
    long now = clock.getAsLong();
    if (failures.size() > SWEEP_ABOVE) {
      sweep(now);
    }
    long[] w = failures.get(address);
    if (w == null) {
      if (failures.size() >= MAX_TRACKED) {
        untracked.incrementAndGet();
        return;
      }
      w = failures.computeIfAbsent(address, a -> new long[] {now, 0});
    }
    synchronized (w) {
      long t = clock.getAsLong();
      if (t - w[0] >= WINDOW_NANOS) {
        w[0] = t;
        w[1] = 0;
      }
      w[1] += cost;
    }
  }

  /** Drops windows older than a minute; at most once a second, by the one thread that won it. */
  private void sweep(long now) {
    long due = nextSweep.get();
    if (now - due < 0 || !nextSweep.compareAndSet(due, now + SWEEP_EVERY_NANOS)) {
      return;
    }
    failures.values().removeIf(w -> expired(w, now));
  }

  private static boolean expired(long[] w, long now) {
    synchronized (w) {
      return now - w[0] >= WINDOW_NANOS;
    }
  }

  /** Addresses currently tracked (tests, metrics). */
  int tracked() {
    return failures.size();
  }

  /** Failures not limited because the table was full of live windows (tests, metrics). */
  long untracked() {
    return untracked.get();
  }
}
