package io.srdma.channel.protocol;

/**
 * A control-plane frame that breaks the protocol: malformed, oversized, truncated, of an unknown or
 * unexpected type, or carrying a field value the protocol does not allow. Unchecked; the session
 * that read it ends (see {@code docs/protocol.md}). The message says what was wrong and never
 * contains body bytes, so it is safe to log.
 */
public final class ProtocolException extends RuntimeException {
  private static final long serialVersionUID = 1L;

  /** What was wrong. */
  public enum Reason {
    /** The frame does not start with the magic {@code "SR"}. */
    BAD_MAGIC,
    /** The frame's version is not one this build speaks. */
    UNSUPPORTED_VERSION,
    /** The type code names no message. */
    UNKNOWN_TYPE,
    /** A flag, reserved field or reserved bit is not zero. */
    RESERVED_NOT_ZERO,
    /** The body length is negative, over the reader's limit or over what the type can hold. */
    FRAME_TOO_LARGE,
    /** The stream ended inside a frame. */
    TRUNCATED,
    /** The body is shorter than its message's layout. */
    BODY_TOO_SHORT,
    /** Bytes are left over after the message's last field. */
    TRAILING_BYTES,
    /** A request or response without a request id (it must not be 0). */
    BAD_REQUEST_ID,
    /** A numeric field is out of range (negative offset, empty length, overflowing range...). */
    BAD_VALUE,
    /** A code that names no value of its enumeration, or an unknown operation bit. */
    BAD_ENUM,
    /** A string is longer than its cap (or an empty name). */
    STRING_TOO_LONG,
    /** A string is not valid UTF-8, holds control characters, or is not a valid name. */
    BAD_STRING,
    /** A valid message that this side does not accept here: wrong direction or out of order. */
    UNEXPECTED_TYPE,
    /** The reader failed earlier inside a frame; the stream is out of sync and cannot be used. */
    READER_FAILED
  }

  private final Reason reason;

  /**
   * Creates the exception.
   *
   * @param reason what was wrong
   * @param message details, without body bytes
   */
  public ProtocolException(Reason reason, String message) {
    super(reason + ": " + message);
    this.reason = reason;
  }

  /** What was wrong. */
  public Reason reason() {
    return reason;
  }
}
