package io.srdma.channel;

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
    if (peer.isLoopbackAddress() && named.isLoopbackAddress()) {
      // the same machine in either family (a client reaching the host over ::1 whose responder
      // listens on 127.0.0.1): a loopback peer reaches every loopback port itself anyway
      return null;
    }
    return "responder address "
        + named.getHostAddress()
        + " is not the peer's own address "
        + peer.getHostAddress();
  }
}
