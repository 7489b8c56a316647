package io.srdma.console;

import io.vertx.core.http.HttpConnection;
import io.vertx.core.net.SocketAddress;
import java.util.HashMap;
import java.util.Map;

/**
 * Bounds the connections the console holds: at most {@code perAddress} of one client address (an
 * IPv6 address counted by its /64, as {@link LoginLimiter#addressKey} does) and {@code total} in
 * all; a connection over either is closed as soon as it is made. A client that opens connection
 * after connection and never finishes a request (slowloris: a byte now and then keeps the idle
 * timeout away; {@link ReadDeadlines} closes each in the end) thus holds a bounded number of the
 * sockets and memory of the process, which the console shares with the RDMA host. Thread-safe.
 */
final class ConnectionLimit {
  private final int perAddress;
  private final int total;
  private final Map<String, Integer> open = new HashMap<>();
  private int all;

  ConnectionLimit(int perAddress, int total) {
    this.perAddress = perAddress;
    this.total = total;
  }

  /**
   * Server connection handler: counts the connection until it closes, then runs {@code onClose}; or
   * closes it at once.
   *
   * @return whether the connection was kept
   */
  boolean accept(HttpConnection c, Runnable onClose) {
    SocketAddress a = c.remoteAddress();
    String key = LoginLimiter.addressKey(a == null ? null : a.hostAddress());
    if (key == null) {
      key = "";
    }
    if (!tryOpen(key)) {
      c.close();
      return false;
    }
    String counted = key;
    c.closeHandler(
        v -> {
          closed(counted);
          onClose.run();
        });
    return true;
  }

  private synchronized boolean tryOpen(String key) {
    int n = open.getOrDefault(key, 0);
    if (n >= perAddress || all >= total) {
      return false;
    }
    open.put(key, n + 1);
    all++;
    return true;
  }

  private synchronized void closed(String key) {
    Integer n = open.get(key);
    if (n == null) {
      return;
    }
    if (n <= 1) {
      open.remove(key);
    } else {
      open.put(key, n - 1);
    }
    all--;
  }

  synchronized int open() {
    return all;
  }
}
