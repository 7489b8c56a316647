package io.srdma.channel.protocol;

import io.srdma.channel.protocol.ProtocolException.Reason;

/**
 * REGION_KEY, server to client, pushed (request id 0): the region key of a READ grant the client
 * holds was rotated (a READ grant on the region ended, or the rotation timer fired); from now on
 * the owner's records are sealed under {@code generation}. The key material has the shape of a
 * GRANT's (its shape set by the data plane; it starts with the same generation). Travels only
 * inside the TLS connection, never in a log. Big-endian.
 *
 * <pre>
 *   0                   1                   2                   3
 *   0 1 2 3 4 5 6 7 8 9 0 1 2 3 4 5 6 7 8 9 0 1 2 3 4 5 6 7 8 9 0 1
 *  +---------------------------------------------------------------+
 *  |                    grant id (i64, > 0)                        |
 *  |                                                               |
 *  +---------------------------------------------------------------+
 *  |                  generation (u32, 1..2^31-1)                  |
 *  +---------------+-----------------------------------------------+
 *  |  key length   |  region key material (1..128) ...
 *  +---------------+-----------------------------------------------+
 * </pre>
 */
public final class RegionKeyFlyweight {
  /** Offset of the grant id (i64, > 0). */
  public static final int GRANT_ID_OFFSET = 0;

  /** Offset of the generation (u32, > 0 as an int). */
  public static final int GENERATION_OFFSET = GRANT_ID_OFFSET + 8;

  /** Offset of the key material's length (u8). */
  public static final int KEY_LENGTH_OFFSET = GENERATION_OFFSET + 4;

  /** Offset of the key material. */
  public static final int KEY_OFFSET = KEY_LENGTH_OFFSET + 1;

  /** Longest region key material. */
  public static final int MAX_REGION_KEY_LENGTH = Wire.MAX_REGION_KEY_LENGTH;

  /** Shortest body. */
  public static final int MIN_LENGTH = KEY_OFFSET + 1;

  /** Longest body. */
  public static final int MAX_LENGTH = KEY_OFFSET + MAX_REGION_KEY_LENGTH;

  private byte[] buffer;
  private int offset;
  private int length;

  /**
   * Wraps a body: {@code length} is the body length when reading, the capacity when encoding.
   *
   * @return this
   */
  public RegionKeyFlyweight wrap(byte[] buffer, int offset, int length) {
    this.buffer = buffer;
    this.offset = offset;
    this.length = length;
    return this;
  }

  /**
   * Encodes the body.
   *
   * @param grantId the READ grant the key is for, > 0
   * @param generation the new generation, > 0
   * @param regionKey the key material, 1..128 bytes
   * @return the body length
   * @throws ProtocolException when a value is out of range
   */
  public int encode(long grantId, int generation, byte[] regionKey) {
    Bytes.positive(grantId, "grant id");
    Bytes.positive(generation, "generation");
    checkKey(regionKey.length);
    Bytes.capacity(length, KEY_OFFSET + regionKey.length, "REGION_KEY");
    Bytes.putLong(buffer, offset + GRANT_ID_OFFSET, grantId);
    Bytes.putInt(buffer, offset + GENERATION_OFFSET, generation);
    Bytes.putU8(buffer, offset + KEY_LENGTH_OFFSET, regionKey.length);
    System.arraycopy(regionKey, 0, buffer, offset + KEY_OFFSET, regionKey.length);
    return KEY_OFFSET + regionKey.length;
  }

  private static void checkKey(int keyLength) {
    if (keyLength < 1 || keyLength > MAX_REGION_KEY_LENGTH) {
      throw new ProtocolException(
          Reason.BAD_VALUE,
          "region key of " + keyLength + " bytes, allowed 1.." + MAX_REGION_KEY_LENGTH);
    }
  }

  /**
   * Checks the wrapped body field by field.
   *
   * @return this
   * @throws ProtocolException what is wrong
   */
  public RegionKeyFlyweight validate() {
    Bytes.atLeast(length, MIN_LENGTH, "REGION_KEY");
    Bytes.positive(grantId(), "grant id");
    Bytes.positive(generation(), "generation");
    checkKey(regionKeyLength());
    Bytes.exactly(length, KEY_OFFSET + regionKeyLength(), "REGION_KEY");
    return this;
  }

  /** The READ grant the key is for. */
  public long grantId() {
    return Bytes.getLong(buffer, offset + GRANT_ID_OFFSET);
  }

  /** The new generation. */
  public int generation() {
    return Bytes.getInt(buffer, offset + GENERATION_OFFSET);
  }

  /** The length of the key material. */
  public int regionKeyLength() {
    return Bytes.getU8(buffer, offset + KEY_LENGTH_OFFSET);
  }

  /** A copy of the key material; the caller wipes it when done (the reader wipes its buffer). */
  public byte[] regionKey() {
    return Wire.copy(buffer, offset + KEY_OFFSET, regionKeyLength());
  }
}
