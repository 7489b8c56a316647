package io.srdma.channel.protocol;

/**
 * RELEASE, client to server: the client no longer needs a grant. Answered by REVOKE with reason
 * RELEASED and the same request id, also when the grant had already ended (release is idempotent).
 * Big-endian.
 *
 * <pre>
 *   0                   1                   2                   3
 *   0 1 2 3 4 5 6 7 8 9 0 1 2 3 4 5 6 7 8 9 0 1 2 3 4 5 6 7 8 9 0 1
 *  +---------------------------------------------------------------+
 *  |                    grant id (i64, > 0)                        |
 *  |                                                               |
 *  +---------------------------------------------------------------+
 * </pre>
 */
public final class ReleaseFlyweight {
  /** Offset of grant id (i64, > 0). */
  public static final int GRANT_ID_OFFSET = 0;

  /** The body length (fixed). */
  public static final int LENGTH = GRANT_ID_OFFSET + 8;

  private byte[] buffer;
  private int offset;
  private int length;

  /**
   * Wraps a body: {@code length} is the body length when reading, the capacity when encoding.
   *
   * @return this
   */
  public ReleaseFlyweight wrap(byte[] buffer, int offset, int length) {
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
  public int encode(long grantId) {
    Bytes.positive(grantId, "grant id");
    Bytes.capacity(length, LENGTH, "RELEASE");
    Bytes.putLong(buffer, offset + GRANT_ID_OFFSET, grantId);
    return LENGTH;
  }

  /**
   * Checks the wrapped body.
   *
   * @return this
   * @throws ProtocolException what is wrong
   */
  public ReleaseFlyweight validate() {
    Bytes.exactly(length, LENGTH, "RELEASE");
    Bytes.positive(grantId(), "grant id");
    return this;
  }

  /** The grant id. */
  public long grantId() {
    return Bytes.getLong(buffer, offset + GRANT_ID_OFFSET);
  }
}
