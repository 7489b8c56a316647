package io.srdma.channel.protocol;

/** The two ends of a control-plane connection: the TLS client (INITIATOR) and the TLS server. */
public enum Side {
  /** The TLS client: the tenant's peer, INITIATOR in the key schedule. */
  CLIENT,
  /** The TLS server: the region host, RESPONDER in the key schedule. */
  SERVER
}
