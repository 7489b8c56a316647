package io.srdma.channel.protocol;

/**
 * REVOKE, server to client: a grant has ended and its rkey no longer works (the window is already
 * invalidated when this is sent). Pushed with request id 0, or with a RELEASE's request id as its
 * answer. Big-endian.
 *
 * <pre>
 *   0                   1                   2                   3
 *   0 1 2 3 4 5 6 7 8 9 0 1 2 3 4 5 6 7 8 9 0 1 2 3 4 5 6 7 8 9 0 1
 *  +---------------------------------------------------------------+
 *  |                    grant id (i64, > 0)                        |
 *  |                                                               |
 *  +-------------------------------+-------------------------------+
 *  |      revoke reason code       |
 *  +-------------------------------+
 * </pre>
 */
public final class RevokeFlyweight {
  /** Offset of the grant id (i64, > 0). */
  public static final int GRANT_ID_OFFSET = 0;

  /** Offset of the {@link RevokeReason} code (u16). */
  public static final int REASON_OFFSET = GRANT_ID_OFFSET + 8;

  /** The body length (fixed). */
  public static final int LENGTH = REASON_OFFSET + 2;

  private byte[] buffer;
  private int offset;
  private int length;

  /**
   * Wraps a body: {@code length} is the body length when reading, the capacity when encoding.
   *
   * @return this
   */
  public RevokeFlyweight wrap(byte[] buffer, int offset, int length) {
    this.buffer = buffer;
    this.offset = offset;
    this.length = length;
    return this;
  }

  /**
   * Encodes the body.
   *
   * @return the body length
   */
  public int encode(long grantId, RevokeReason reason) {
    Bytes.positive(grantId, "grant id");
    Bytes.capacity(length, LENGTH, "REVOKE");
    Bytes.putLong(buffer, offset + GRANT_ID_OFFSET, grantId);
    Bytes.putU16(buffer, offset + REASON_OFFSET, reason.code());
    return LENGTH;
  }

  /**
   * Checks the wrapped body.
   *
   * @return this
   * @throws ProtocolException what is wrong
   */
  public RevokeFlyweight validate() {
    Bytes.exactly(length, LENGTH, "REVOKE");
    Bytes.positive(grantId(), "grant id");
    reason();
    return this;
  }

  /** The grant that ended. */
  public long grantId() {
    return Bytes.getLong(buffer, offset + GRANT_ID_OFFSET);
  }

  /** Why it ended. */
  public RevokeReason reason() {
    return RevokeReason.fromCode(Bytes.getU16(buffer, offset + REASON_OFFSET));
  }
}
