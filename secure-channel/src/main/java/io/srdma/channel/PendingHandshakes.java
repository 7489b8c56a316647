package io.srdma.channel;

import java.net.InetAddress;
import java.util.HashMap;
import java.util.Map;

/**
 * Admission before authentication: at most {@code total} connections between accept and the end of
 * their TLS handshake, and at most {@code perAddress} of them from one remote address, so idle or
 * slow connections from one address cannot hold every pending slot while a tenant elsewhere waits.
 * Thread-safe.
 */
final class PendingHandshakes {
  private final int total;
  private final int perAddress;
  private final Map<InetAddress, Integer> byAddress = new HashMap<>();
  private int pending;

  PendingHandshakes(int total, int perAddress) {
    this.total = total;
    this.perAddress = perAddress;
  }

  /** Takes a slot for a connection from {@code address}; false when a cap is reached. */
  synchronized boolean tryAcquire(InetAddress address) {
    if (pending >= total) {
      return false;
    }
    int n = byAddress.getOrDefault(address, 0);
    if (n >= perAddress) {
      return false;
    }
    byAddress.put(address, n + 1);
    pending++;
    return true;
  }

  /** Gives back the slot taken for {@code address} (once per successful {@link #tryAcquire}). */
  synchronized void release(InetAddress address) {
    Integer n = byAddress.get(address);
    if (n == null) {
      throw new IllegalStateException("no pending handshake from " + address);
    }
    if (n == 1) {
      byAddress.remove(address);
    } else {
      byAddress.put(address, n - 1);
    }
    pending--;
  }

  /** Connections pending now, all addresses. */
  synchronized int pending() {
    return pending;
  }
}
