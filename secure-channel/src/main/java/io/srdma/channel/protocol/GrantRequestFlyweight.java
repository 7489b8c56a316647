package io.srdma.channel.protocol;

/**
 * GRANT_REQUEST, client to server: access to {@code [offset, offset + length)} of one of the
 * tenant's regions, for the operations in the bitmask, for a TTL. The tenant and the peer come from
 * the client's certificate, never from this message. Answered by GRANT or GRANT_DENIED with the
 * same request id. Big-endian.
 *
 * <pre>
 *   0                   1                   2                   3
 *   0 1 2 3 4 5 6 7 8 9 0 1 2 3 4 5 6 7 8 9 0 1 2 3 4 5 6 7 8 9 0 1
 *  +---------------------------------------------------------------+
 *  |                   offset (i64, ≥ 0)                           |
 *  |                                                               |
 *  +---------------------------------------------------------------+
 *  |                   length (i64, > 0)                           |
 *  |                                                               |
 *  +---------------------------------------------------------------+
 *  |                   TTL in ms (i64, > 0)                        |
 *  |                                                               |
 *  +---------------+---------------+-------------------------------+
 *  |  operations   |  name length  |  region name (1..63 bytes)   ...
 *  +---------------+---------------+-------------------------------+
 * </pre>
 */
public final class GrantRequestFlyweight {
  /** Offset of the offset into the region (i64, ≥ 0). */
  public static final int OFFSET_OFFSET = 0;

  /** Offset of the length (i64, > 0; offset + length does not overflow). */
  public static final int LENGTH_OFFSET = OFFSET_OFFSET + 8;

  /** Offset of the requested TTL in milliseconds (i64, > 0; the policy may clip it). */
  public static final int TTL_OFFSET = LENGTH_OFFSET + 8;

  /** Offset of the {@link Operations} bitmask (u8). */
  public static final int OPERATIONS_OFFSET = TTL_OFFSET + 8;

  /** Offset of the region name's length (u8). */
  public static final int NAME_LENGTH_OFFSET = OPERATIONS_OFFSET + 1;

  /** Offset of the region name (ASCII, {@code [a-z0-9][a-z0-9_-]*}). */
  public static final int NAME_OFFSET = NAME_LENGTH_OFFSET + 1;

  /** Shortest body. */
  public static final int MIN_LENGTH = NAME_OFFSET + 1;

  /** Longest body. */
  public static final int MAX_LENGTH = NAME_OFFSET + Bytes.MAX_NAME_LENGTH;

  private byte[] buffer;
  private int offset;
  private int length;

  /**
   * Wraps a body: {@code length} is the body length when reading, the capacity when encoding.
   *
   * @return this
   */
  public GrantRequestFlyweight wrap(byte[] buffer, int offset, int length) {
    this.buffer = buffer;
    this.offset = offset;
    this.length = length;
    return this;
  }

  /**
   * Encodes the body.
   *
   * @param region the region name
   * @param operations the {@link Operations} bitmask
   * @param regionOffset the first byte, ≥ 0
   * @param rangeLength the number of bytes, > 0
   * @param ttlMillis the lifetime asked for, > 0
   * @return the body length
   * @throws ProtocolException when a value is out of range
   */
  public int encode(
      String region, int operations, long regionOffset, long rangeLength, long ttlMillis) {
    Operations.check(operations);
    Bytes.range(regionOffset, rangeLength);
    Bytes.positive(ttlMillis, "ttl");
    Bytes.capacity(length, MAX_LENGTH, "GRANT_REQUEST");
    int n = Bytes.putName(buffer, offset + NAME_OFFSET, region);
    Bytes.putLong(buffer, offset + OFFSET_OFFSET, regionOffset);
    Bytes.putLong(buffer, offset + LENGTH_OFFSET, rangeLength);
    Bytes.putLong(buffer, offset + TTL_OFFSET, ttlMillis);
    Bytes.putU8(buffer, offset + OPERATIONS_OFFSET, operations);
    Bytes.putU8(buffer, offset + NAME_LENGTH_OFFSET, n);
    return NAME_OFFSET + n;
  }

  /**
   * Checks the wrapped body field by field.
   *
   * @return this
   * @throws ProtocolException what is wrong
   */
  public GrantRequestFlyweight validate() {
    Bytes.atLeast(length, MIN_LENGTH, "GRANT_REQUEST");
    Bytes.range(offset(), length());
    Bytes.positive(ttlMillis(), "ttl");
    Operations.check(operations());
    int n = Bytes.checkNameLength(Bytes.getU8(buffer, offset + NAME_LENGTH_OFFSET));
    Bytes.exactly(length, NAME_OFFSET + n, "GRANT_REQUEST");
    Bytes.checkName(buffer, offset + NAME_OFFSET, n);
    return this;
  }

  /** The region name. */
  public String region() {
    return Bytes.name(
        buffer, offset + NAME_OFFSET, Bytes.getU8(buffer, offset + NAME_LENGTH_OFFSET));
  }

  /** The {@link Operations} bitmask. */
  public int operations() {
    return Bytes.getU8(buffer, offset + OPERATIONS_OFFSET);
  }

  /** The offset of the first byte in the region. */
  public long offset() {
    return Bytes.getLong(buffer, offset + OFFSET_OFFSET);
  }

  /** The number of bytes. */
  public long length() {
    return Bytes.getLong(buffer, offset + LENGTH_OFFSET);
  }

  /** The lifetime asked for, in milliseconds. */
  public long ttlMillis() {
    return Bytes.getLong(buffer, offset + TTL_OFFSET);
  }
}
