package io.srdma.console;

import java.time.Clock;
import java.time.Duration;
import java.util.HashMap;
import java.util.Iterator;
import java.util.Map;

/**
 * Login rate limit per user name and client address: at most {@code attempts} attempts without a
 * success in a fixed window. An attempt counts when it starts, so concurrent guesses cannot slip
 * past the limit; a success clears the key. The table is bounded: when full, expired keys are
 * dropped, and if none are, new keys are refused until some expire.
 */
final class LoginLimiter {
  static final int MAX_KEYS = 10_000;

  private final int attempts;
  private final long windowMillis;
  private final Clock clock;
  private final Map<String, long[]> windows = new HashMap<>(); // key -> {start, count}

  LoginLimiter(int attempts, Duration window, Clock clock) {
    this.attempts = attempts;
    this.windowMillis = window.toMillis();
    this.clock = clock;
  }

  /**
   * Counts an attempt.
   *
   * @return 0 if it may go ahead, else seconds until it may be tried again (at least 1)
   */
  synchronized long tryAcquire(String user, String remote) {
    long now = clock.millis();
    String key = user + '\0' + remote;
    long[] w = windows.get(key);
    if (w == null || now - w[0] >= windowMillis) {
      if (w == null && windows.size() >= MAX_KEYS) {
        purge(now);
        if (windows.size() >= MAX_KEYS) {
          return Math.max(1, windowMillis / 1000);
        }
      }
      w = new long[] {now, 0};
      windows.put(key, w);
    }
    if (w[1] >= attempts) {
      return Math.max(1, (w[0] + windowMillis - now + 999) / 1000);
    }
    w[1]++;
    return 0;
  }

  /** A successful login clears its key. */
  synchronized void succeeded(String user, String remote) {
    windows.remove(user + '\0' + remote);
  }

  synchronized int size() {
    return windows.size();
  }

  private void purge(long now) {
    for (Iterator<long[]> it = windows.values().iterator(); it.hasNext(); ) {
      if (now - it.next()[0] >= windowMillis) {
        it.remove();
      }
    }
  }
}
