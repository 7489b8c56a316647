package io.srdma.channel.protocol;

/** Why a grant ended (REVOKE). */
public enum RevokeReason {
  /** Its TTL ran out. */
  EXPIRED(1),
  /** An operator revoked it (console, command line or host API). */
  REVOKED(2),
  /** A policy reload narrowed the peer's rights below it. */
  POLICY_CHANGED(3),
  /** The session is ending. */
  SESSION_ENDING(4),
  /** The client released it (the answer to RELEASE, with its request id). */
  RELEASED(5);

  private final int code;

  RevokeReason(int code) {
    this.code = code;
  }

  /** The wire code (u16). */
  public int code() {
    return code;
  }

  /**
   * The reason with this wire code.
   *
   * @throws ProtocolException BAD_ENUM when no reason has it
   */
  public static RevokeReason fromCode(int code) {
    for (RevokeReason r : values()) {
      if (r.code == code) {
        return r;
      }
    }
    throw new ProtocolException(ProtocolException.Reason.BAD_ENUM, "revoke reason " + code);
  }
}
