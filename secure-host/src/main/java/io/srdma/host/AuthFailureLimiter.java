package io.srdma.host;

import java.net.InetAddress;
import java.util.concurrent.ConcurrentHashMap;
import java.util.function.LongSupplier;

/**
 * Refuses a remote address that failed authentication too often in the current minute (IPv6
 * addresses counted by /64, see {@link PendingHandshakes#bucket}). Thread-safe.
 */
final class AuthFailureLimiter {
  private static final long WINDOW_NANOS = 60_000_000_000L;
  private static final int MAX_TRACKED = 10_000;

  private final int maxFailures;
  private final LongSupplier clock;
  private final ConcurrentHashMap<InetAddress, long[]> failures = new ConcurrentHashMap<>();

  AuthFailureLimiter(int maxFailuresPerMinute, LongSupplier nanoClock) {
    this.maxFailures = maxFailuresPerMinute;
    this.clock = nanoClock;
  }

  boolean blocked(InetAddress from) {
    long[] w = failures.get(PendingHandshakes.bucket(from));
    if (w == null) {
      return false;
    }
    synchronized (w) {
      return clock.getAsLong() - w[0] < WINDOW_NANOS && w[1] >= maxFailures;
    }
  }

  void failed(InetAddress from) {
    InetAddress address = PendingHandshakes.bucket(from);
    if (failures.size() > MAX_TRACKED) {
      long now = clock.getAsLong();
      failures.values().removeIf(w -> now - w[0] >= WINDOW_NANOS);
    }
    long[] w = failures.computeIfAbsent(address, a -> new long[] {clock.getAsLong(), 0});
    synchronized (w) {
      long now = clock.getAsLong();
      if (now - w[0] >= WINDOW_NANOS) {
        w[0] = now;
        w[1] = 0;
      }
      w[1]++;
    }
  }
}
