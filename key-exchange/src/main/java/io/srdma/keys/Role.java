package io.srdma.keys;

/** Which end of a session a party is; the TLS client is the initiator. */
public enum Role {
  /** The party that opened the connection (the TLS client). */
  INITIATOR,
  /** The party that accepted it (the TLS server). */
  RESPONDER;

  /** The direction this role sends in. */
  public Direction sendDirection() {
    return this == INITIATOR ? Direction.INITIATOR_TO_RESPONDER : Direction.RESPONDER_TO_INITIATOR;
  }

  /** The direction this role receives in. */
  public Direction receiveDirection() {
    return this == INITIATOR ? Direction.RESPONDER_TO_INITIATOR : Direction.INITIATOR_TO_RESPONDER;
  }
}
