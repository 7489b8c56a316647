package io.srdma.channel.protocol;

import io.srdma.channel.protocol.ProtocolException.Reason;

/**
 * GRANT, server to client, the answer to GRANT_REQUEST (same request id): what the client may do,
 * where, until when, and the rkey and remote address to post the RDMA operations with. A grant that
 * includes READ carries the region key material (1..128 bytes, its shape defined by the data plane)
 * so the reader can open records the owner sealed; a grant without READ carries none. That key
 * travels only here, inside the TLS connection, and never in a log. Big-endian.
 *
 * <pre>
 *   0                   1                   2                   3
 *   0 1 2 3 4 5 6 7 8 9 0 1 2 3 4 5 6 7 8 9 0 1 2 3 4 5 6 7 8 9 0 1
 *  +---------------------------------------------------------------+
 *  |                    grant id (i64, > 0)                        |
 *  |                                                               |
 *  +---------------------------------------------------------------+
 *  |                 offset in region (i64, ≥ 0)                   |
 *  |                                                               |
 *  +---------------------------------------------------------------+
 *  |                    length (i64, > 0)                          |
 *  |                                                               |
 *  +---------------------------------------------------------------+
 *  |              expiry, Unix epoch ms (i64, > 0)                 |
 *  |                                                               |
 *  +---------------------------------------------------------------+
 *  |      remote address of the granted range's first byte (u64)   |
 *  |                                                               |
 *  +---------------------------------------------------------------+
 *  |                            rkey                               |
 *  +---------------+---------------+---------------+---------------+
 *  |  operations   | key length    |  name length  | region name  ...
 *  +---------------+---------------+---------------+---------------+
 *  | ... region name (1..63) | region key (0, or 1..128 with READ) ...
 *  +---------------------------------------------------------------+
 * </pre>
 */
public final class GrantFlyweight {
  /** Offset of the grant id (i64, > 0). */
  public static final int GRANT_ID_OFFSET = 0;

  /** Offset of the offset into the region (i64, ≥ 0). */
  public static final int OFFSET_OFFSET = GRANT_ID_OFFSET + 8;

  /** Offset of the length (i64, > 0; offset + length does not overflow). */
  public static final int LENGTH_OFFSET = OFFSET_OFFSET + 8;

  /** Offset of the expiry, Unix epoch milliseconds (i64, > 0). */
  public static final int EXPIRY_OFFSET = LENGTH_OFFSET + 8;

  /** Offset of the remote (virtual) address of the range's first byte (u64). */
  public static final int REMOTE_ADDRESS_OFFSET = EXPIRY_OFFSET + 8;

  /** Offset of the rkey (u32). */
  public static final int RKEY_OFFSET = REMOTE_ADDRESS_OFFSET + 8;

  /** Offset of the {@link Operations} bitmask (u8). */
  public static final int OPERATIONS_OFFSET = RKEY_OFFSET + 4;

  /** Offset of the region key's length (u8). */
  public static final int KEY_LENGTH_OFFSET = OPERATIONS_OFFSET + 1;

  /** Offset of the region name's length (u8). */
  public static final int NAME_LENGTH_OFFSET = KEY_LENGTH_OFFSET + 1;

  /** Offset of the region name; the region key follows it. */
  public static final int NAME_OFFSET = NAME_LENGTH_OFFSET + 1;

  /** Longest region key material. */
  public static final int MAX_REGION_KEY_LENGTH = Wire.MAX_REGION_KEY_LENGTH;

  /** Shortest body. */
  public static final int MIN_LENGTH = NAME_OFFSET + 1;

  /** Longest body. */
  public static final int MAX_LENGTH = NAME_OFFSET + Bytes.MAX_NAME_LENGTH + MAX_REGION_KEY_LENGTH;

  private byte[] buffer;
  private int offset;
  private int length;

  /**
   * Wraps a body: {@code length} is the body length when reading, the capacity when encoding.
   *
   * @return this
   */
  public GrantFlyweight wrap(byte[] buffer, int offset, int length) {
    this.buffer = buffer;
    this.offset = offset;
    this.length = length;
    return this;
  }

  /**
   * Encodes the body.
   *
   * @param grantId the grant id, > 0
   * @param region the region name
   * @param operations the {@link Operations} bitmask granted
   * @param regionOffset the first byte granted, ≥ 0
   * @param rangeLength the number of bytes granted, > 0
   * @param expiryEpochMillis when the grant ends, Unix epoch milliseconds
   * @param remoteAddress the address to post the range's first byte at
   * @param rkey the rkey of the memory window (or region) over exactly that range
   * @param regionKey the region key material: 1..128 bytes when {@code operations} includes READ,
   *     else empty
   * @return the body length
   * @throws ProtocolException when a value is out of range
   */
  public int encode(
      long grantId,
      String region,
      int operations,
      long regionOffset,
      long rangeLength,
      long expiryEpochMillis,
      long remoteAddress,
      int rkey,
      byte[] regionKey) {
    Bytes.positive(grantId, "grant id");
    Operations.check(operations);
    Bytes.range(regionOffset, rangeLength);
    Bytes.positive(expiryEpochMillis, "expiry");
    checkKey(operations, regionKey.length);
    Bytes.capacity(length, MAX_LENGTH, "GRANT");
    int n = Bytes.putName(buffer, offset + NAME_OFFSET, region);
    Bytes.putLong(buffer, offset + GRANT_ID_OFFSET, grantId);
    Bytes.putLong(buffer, offset + OFFSET_OFFSET, regionOffset);
    Bytes.putLong(buffer, offset + LENGTH_OFFSET, rangeLength);
    Bytes.putLong(buffer, offset + EXPIRY_OFFSET, expiryEpochMillis);
    Bytes.putLong(buffer, offset + REMOTE_ADDRESS_OFFSET, remoteAddress);
    Bytes.putInt(buffer, offset + RKEY_OFFSET, rkey);
    Bytes.putU8(buffer, offset + OPERATIONS_OFFSET, operations);
    Bytes.putU8(buffer, offset + KEY_LENGTH_OFFSET, regionKey.length);
    Bytes.putU8(buffer, offset + NAME_LENGTH_OFFSET, n);
    System.arraycopy(regionKey, 0, buffer, offset + NAME_OFFSET + n, regionKey.length);
    return NAME_OFFSET + n + regionKey.length;
  }

  private static void checkKey(int operations, int keyLength) {
    if (keyLength > MAX_REGION_KEY_LENGTH) {
      throw new ProtocolException(
          Reason.BAD_VALUE,
          "region key of " + keyLength + " bytes, allowed " + MAX_REGION_KEY_LENGTH);
    }
    if (Operations.includesRead(operations) != (keyLength > 0)) {
      throw new ProtocolException(
          Reason.BAD_VALUE, "a region key goes with READ grants and only with them");
    }
  }

  /**
   * Checks the wrapped body field by field.
   *
   * @return this
   * @throws ProtocolException what is wrong
   */
  public GrantFlyweight validate() {
    Bytes.atLeast(length, MIN_LENGTH, "GRANT");
    Bytes.positive(grantId(), "grant id");
    Bytes.range(offset(), length());
    Bytes.positive(expiryEpochMillis(), "expiry");
    Operations.check(operations());
    checkKey(operations(), regionKeyLength());
    int n = Bytes.checkNameLength(Bytes.getU8(buffer, offset + NAME_LENGTH_OFFSET));
    Bytes.exactly(length, NAME_OFFSET + n + regionKeyLength(), "GRANT");
    Bytes.checkName(buffer, offset + NAME_OFFSET, n);
    return this;
  }

  /** The grant id. */
  public long grantId() {
    return Bytes.getLong(buffer, offset + GRANT_ID_OFFSET);
  }

  /** The region name. */
  public String region() {
    return Bytes.name(buffer, offset + NAME_OFFSET, nameLength());
  }

  /** The {@link Operations} bitmask granted. */
  public int operations() {
    return Bytes.getU8(buffer, offset + OPERATIONS_OFFSET);
  }

  /** The offset of the first byte granted in the region. */
  public long offset() {
    return Bytes.getLong(buffer, offset + OFFSET_OFFSET);
  }

  /** The number of bytes granted. */
  public long length() {
    return Bytes.getLong(buffer, offset + LENGTH_OFFSET);
  }

  /** When the grant ends, Unix epoch milliseconds. */
  public long expiryEpochMillis() {
    return Bytes.getLong(buffer, offset + EXPIRY_OFFSET);
  }

  /** The remote address of the granted range's first byte. */
  public long remoteAddress() {
    return Bytes.getLong(buffer, offset + REMOTE_ADDRESS_OFFSET);
  }

  /** The rkey to post with. */
  public int rkey() {
    return Bytes.getInt(buffer, offset + RKEY_OFFSET);
  }

  /** The length of the region key material: 0 unless the grant includes READ. */
  public int regionKeyLength() {
    return Bytes.getU8(buffer, offset + KEY_LENGTH_OFFSET);
  }

  /**
   * A copy of the region key material (empty without READ); the caller wipes it when done. The
   * reader wipes its own buffer before the next frame.
   */
  public byte[] regionKey() {
    return Wire.copy(buffer, offset + NAME_OFFSET + nameLength(), regionKeyLength());
  }

  private int nameLength() {
    return Bytes.getU8(buffer, offset + NAME_LENGTH_OFFSET);
  }
}
