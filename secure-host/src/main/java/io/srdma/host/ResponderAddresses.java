package io.srdma.host;

import io.srdma.verbs.ConnectionInfo;
import java.net.InetAddress;
import java.net.UnknownHostException;
import java.util.Set;

/**
 * Decides whether the host may connect its queue pair to the responder address a peer names in
 * HELLO. On the soft provider that address is a TCP endpoint the host connects to, so a peer that
 * could name any address would make the host probe or reach what the peer cannot (request forgery).
 * Accepted: the TLS peer's own address (for a loopback peer, any loopback address: the same machine
 * in the other address family), the addresses configured in {@link
 * HostOptions#allowedResponderAddresses}, or anything when {@link HostOptions#trustHelloAddress} is
 * set. The decision is made from the bytes alone, before any connection is attempted, so a refusal
 * looks the same whatever is listening at the address. Thread-safe (immutable).
 *
 * <p>Other providers' addresses (ibv: GID, LID, port) name fabric endpoints the RNIC sends packets
 * to, not something the host connects to over TCP; they are not checked here.
 */
final class ResponderAddresses {
  private final boolean soft;
  private final boolean trustHello;
  private final Set<InetAddress> allowed;

  ResponderAddresses(String providerName, boolean trustHello, Set<InetAddress> allowed) {
    this.soft = "soft".equals(providerName);
    this.trustHello = trustHello;
    this.allowed = Set.copyOf(allowed);
  }

  /**
   * Why the host must not connect to {@code info}'s address for a peer at {@code peer}, or null
   * when it may.
   */
  String refusal(ConnectionInfo info, InetAddress peer) {
    if (!soft || trustHello) {
      return null;
    }
    byte[] address = info.address();
    if (address.length != 6 && address.length != 18) {
      return "responder address is not a soft provider address (" + address.length + " bytes)";
    }
    InetAddress named;
    try {
      named = InetAddress.getByAddress(java.util.Arrays.copyOf(address, address.length - 2));
    } catch (UnknownHostException e) {
      return "responder address is malformed";
    }
    if (named.equals(peer) || allowed.contains(named)) {
      return null;
    }
    if (isLocalhost(peer) && isLocalhost(named)) {
      // the same address in the other family (a client reaching the host over ::1 whose responder
      // listens on 127.0.0.1); other loopback addresses (127.0.0.2…) are other addresses
      return null;
    }
    return "responder address "
        + named.getHostAddress()
        + " is not the peer's own address "
        + peer.getHostAddress();
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
