package io.srdma.channel;

import io.srdma.verbs.ConnectionInfo;
import java.net.InetAddress;
import java.net.UnknownHostException;
import java.util.Arrays;
import java.util.Set;

/**
 * Decides whether the client may connect its queue pair to the responder address the host names in
 * HELLO_ACK: the client-side mirror of the host's check of HELLO (secure-host {@code
 * ResponderAddresses}). On the soft provider that address is a TCP endpoint the client connects to,
 * so a host that could name any address would make its clients probe or reach what the host cannot
 * (request forgery, port scans by timing). Accepted: the host's own address on the TLS connection
 * (for a loopback host, either loopback address: {@code 127.0.0.1} and {@code ::1} are one
 * machine), or an address in {@link ClientOptions#allowedResponderAddresses}. Decided from the
 * bytes alone, before any connection is attempted. Immutable.
 *
 * <p>Other providers' addresses (ibv: GID, LID, port) name fabric endpoints the RNIC sends packets
 * to, not something the client connects to over TCP; they are not checked here.
 */
final class HostResponderAddress {
  private final boolean soft;
  private final Set<InetAddress> allowed;
  private final InetAddress host;

  /**
   * @param providerName the provider of the client's queue pair
   * @param allowed addresses the host may name besides its own
   * @param host the host's address on the TLS connection
   */
  HostResponderAddress(String providerName, Set<InetAddress> allowed, InetAddress host) {
    this.soft = "soft".equals(providerName);
    this.allowed = Set.copyOf(allowed);
    this.host = host;
  }

  /** Why the client must not connect to {@code info}'s address, or null when it may. */
  String refusal(ConnectionInfo info) {
    if (!soft) {
      return null;
    }
    byte[] address = info.address();
    if (address.length != 6 && address.length != 18) {
      return "host's responder address is not a soft provider address ("
          + address.length
          + " bytes)";
    }
    InetAddress named;
    try {
      named = InetAddress.getByAddress(Arrays.copyOf(address, address.length - 2));
    } catch (UnknownHostException e) {
      return "host's responder address is malformed";
    }
    if (named.equals(host) || allowed.contains(named)) {
      return null;
    }
    if (isLocalhost(host) && isLocalhost(named)) {
      // the same machine in the other family (a host reached over ::1 whose responder listens on
      // 127.0.0.1); other loopback addresses (127.0.0.2…) are other addresses
      return null;
    }
    int port = ((address[address.length - 2] & 0xff) << 8) | (address[address.length - 1] & 0xff);
    return "host's responder address "
        + named.getHostAddress()
        + " (port "
        + port
        + ") is not its own address "
        + host.getHostAddress()
        + " nor in ClientOptions.allowedResponderAddresses";
  }

  /** {@code 127.0.0.1} or {@code ::1}: this machine's own loopback address in either family. */
  private static boolean isLocalhost(InetAddress a) {
    byte[] b = a.getAddress();
    if (b.length == 4) {
      return b[0] == 127 && b[1] == 0 && b[2] == 0 && b[3] == 1;
    }
    for (int i = 0; i < 15; i++) {
      if (b[i] != 0) {
        return false;
      }
    }
    return b[15] == 1;
  }
}
