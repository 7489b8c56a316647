package io.srdma.host;

import java.net.Inet6Address;
import java.net.InetAddress;
import java.net.UnknownHostException;
import java.util.Arrays;
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

  /**
   * The unit per-address limits count by: an IPv4 address itself, an IPv6 address's /64 prefix (one
   * subscriber or host usually holds a whole /64, so counting single IPv6 addresses would give an
   * attacker unlimited ones).
   */
  static InetAddress bucket(InetAddress address) {
    if (!(address instanceof Inet6Address)) {
      return address;
    }
    byte[] b = Arrays.copyOf(address.getAddress(), 16);
    Arrays.fill(b, 8, 16, (byte) 0);
    try {
      return InetAddress.getByAddress(b);
    } catch (UnknownHostException e) {
      throw new IllegalStateException("16 bytes are an IPv6 address", e);
    }
  }

  /** Takes a slot for a connection from {@code from}; false when a cap is reached. */
  synchronized boolean tryAcquire(InetAddress from) {
    InetAddress address = bucket(from);
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

  /** Gives back the slot taken for {@code from} (once per successful {@link #tryAcquire}). */
  synchronized void release(InetAddress from) {
    InetAddress address = bucket(from);
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
