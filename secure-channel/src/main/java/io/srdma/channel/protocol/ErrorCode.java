package io.srdma.channel.protocol;

/** Why a side ends the session (ERROR). ERROR is always the sender's last frame. */
public enum ErrorCode {
  /** The peer sent a malformed frame; the text names the {@link ProtocolException.Reason}. */
  PROTOCOL_VIOLATION(1),
  /** A valid message out of order or in the wrong direction. */
  UNEXPECTED_MESSAGE(2),
  /** No protocol version in common. */
  UNSUPPORTED_VERSION(3),
  /** The peer's key confirmation value did not match. */
  KEY_CONFIRMATION_FAILED(4),
  /** The peer did not answer or finish a step within its deadline. */
  TIMEOUT(5),
  /** A per-tenant limit on sessions or queue pairs was reached. */
  QUOTA_EXCEEDED(6),
  /** Too many attempts; try later. */
  RATE_LIMITED(7),
  /** The host is shutting down. */
  SHUTTING_DOWN(8),
  /** The sender failed; details are in its log, not on the wire. */
  INTERNAL_ERROR(9);

  private final int code;

  ErrorCode(int code) {
    this.code = code;
  }

  /** The wire code (u16). */
  public int code() {
    return code;
  }

  /**
   * The error with this wire code.
   *
   * @throws ProtocolException BAD_ENUM when no error has it
   */
  public static ErrorCode fromCode(int code) {
    for (ErrorCode c : values()) {
      if (c.code == code) {
        return c;
      }
    }
    throw new ProtocolException(ProtocolException.Reason.BAD_ENUM, "error code " + code);
  }
}
