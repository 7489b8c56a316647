package io.srdma.console;

import java.time.Clock;
import java.time.Duration;
import java.util.LinkedHashMap;
import java.util.Map;

/**
 * Login rate limits, two at once; an attempt must pass both.
 *
 * <ul>
 *   <li><b>Per user name and client address</b>: at most {@code attempts} attempts without a
 *       success in a fixed window; a success clears the key. Keyed by address too, so that nobody
 *       can lock a user out from elsewhere.
 *   <li><b>Per client address</b> (an IPv6 address counted by its /64, {@link #addressKey}): a
 *       token bucket of {@link #addressBudget(int) 4 x attempts} (at least 10) tokens, refilled
 *       evenly over the window. Every attempt takes a token, a success gives it back; so guessing
 *       with fresh user names from one address is limited as well, while people who type their
 *       password right are never slowed.
 * </ul>
 *
 * <p>An attempt counts when it starts, so concurrent guesses cannot slip past either limit; an
 * attempt refused by one limit is charged to neither. Both tables are bounded at {@link #MAX_KEYS}
 * entries and evict the least recently used entry when full, so a flood of fresh keys can never
 * refuse everyone (as refusing new keys would); evicting a limited key forgets its count, which the
 * per-address bucket bounds. Thread-safe: every method holds this object's lock.
 */
final class LoginLimiter {
  static final int MAX_KEYS = 10_000;

  private final int attempts;
  private final long windowMillis;
  private final int addressBudget;
  private final Clock clock;
  private final Map<String, long[]> windows = lru(); // user\0address -> {start, count}
  private final Map<String, double[]> buckets = lru(); // address -> {tokens, last refill}

  LoginLimiter(int attempts, Duration window, Clock clock) {
    this.attempts = attempts;
    this.windowMillis = window.toMillis();
    this.addressBudget = addressBudget(attempts);
    this.clock = clock;
  }

  /** Attempts one client address may fail within a window: 4 x attempts, at least 10. */
  static int addressBudget(int attempts) {
    return (int) Math.min(Integer.MAX_VALUE, Math.max(10L, 4L * attempts));
  }

  /**
   * Counts an attempt against both limits, or against neither if one refuses it.
   *
   * @return 0 if it may go ahead, else seconds until it may be tried again (at least 1)
   */
  synchronized long tryAcquire(String user, String address) {
    String remote = addressKey(address);
    long now = clock.millis();
    String key = user + '\0' + remote;
    long[] w = windows.get(key);
    if (w != null && now - w[0] >= windowMillis) {
      w = null;
    }
    if (w != null && w[1] >= attempts) {
      return Math.max(1, (w[0] + windowMillis - now + 999) / 1000);
    }
    double[] b = bucket(remote, now);
    if (b[0] < 1) {
      double perMilli = (double) addressBudget / windowMillis;
      return Math.max(1, (long) Math.ceil((1 - b[0]) / perMilli / 1000));
    }
    b[0] -= 1;
    if (w == null) {
      w = new long[] {now, 0};
      windows.put(key, w);
    }
    w[1]++;
    return 0;
  }

  /** A successful login clears its user key and gives its address token back. */
  synchronized void succeeded(String user, String address) {
    String remote = addressKey(address);
    windows.remove(user + '\0' + remote);
    double[] b = buckets.get(remote);
    if (b != null) {
      b[0] = Math.min(addressBudget, b[0] + 1);
    }
  }

  /**
   * An attempt that was counted but never ran (the server was too busy to check the password):
   * given back to both limits.
   */
  synchronized void cancelled(String user, String address) {
    String remote = addressKey(address);
    long[] w = windows.get(user + '\0' + remote);
    if (w != null && w[1] > 0) {
      w[1]--;
    }
    double[] b = buckets.get(remote);
    if (b != null) {
      b[0] = Math.min(addressBudget, b[0] + 1);
    }
  }

  /** Entries in the user-and-address table. */
  synchronized int size() {
    return windows.size();
  }

  /** Entries in the per-address table. */
  synchronized int addresses() {
    return buckets.size();
  }

  /**
   * The unit the limits count a client address by, as the host's pre-authentication limits do: an
   * IPv4 address itself, an IPv6 address's /64 prefix (one subscriber usually holds a whole /64, so
   * counting single IPv6 addresses would give an attacker unlimited fresh buckets). An IPv4-mapped
   * IPv6 address counts as its IPv4 address. No name is ever resolved: a text that is not an IP
   * literal is its own key.
   */
  static String addressKey(String address) {
    if (address == null || address.indexOf(':') < 0) {
      return address;
    }
    String literal = address;
    if (literal.startsWith("[") && literal.endsWith("]")) {
      literal = literal.substring(1, literal.length() - 1);
    }
    int zone = literal.indexOf('%');
    if (zone >= 0) {
      literal = literal.substring(0, zone);
    }
    if (!literal.matches("[0-9A-Fa-f:.]{2,45}")) {
      return address;
    }
    try {
      java.net.InetAddress a = java.net.InetAddress.getByName(literal); // a literal: no lookup
      byte[] b = a.getAddress();
      if (b.length == 16) {
        java.util.Arrays.fill(b, 8, 16, (byte) 0);
        return java.net.InetAddress.getByAddress(b).getHostAddress() + "/64";
      }
      return a.getHostAddress();
    } catch (java.net.UnknownHostException e) {
      return address;
    }
  }

  private double[] bucket(String remote, long now) {
    double[] b = buckets.get(remote);
    if (b == null) {
      b = new double[] {addressBudget, now};
      buckets.put(remote, b);
      return b;
    }
    double refill = (now - b[1]) * (double) addressBudget / windowMillis;
    if (refill > 0) {
      b[0] = Math.min(addressBudget, b[0] + refill);
      b[1] = now;
    }
    return b;
  }

  private static <V> Map<String, V> lru() {
    return new LinkedHashMap<>(256, 0.75f, true) {
      private static final long serialVersionUID = 1L;

      @Override
      protected boolean removeEldestEntry(Map.Entry<String, V> eldest) {
        return size() > MAX_KEYS;
      }
    };
  }
}
