package io.srdma.channel.protocol;

/**
 * REKEY, either direction: the sender seals data-plane records with this epoch from now on
 * (docs/keys.md, "Rekey"); the receiver may commit to it without waiting for a record of it. No
 * answer. Big-endian.
 *
 * <pre>
 *   0                   1                   2                   3
 *   0 1 2 3 4 5 6 7 8 9 0 1 2 3 4 5 6 7 8 9 0 1 2 3 4 5 6 7 8 9 0 1
 *  +---------------------------------------------------------------+
 *  |                      new epoch (> 0)                          |
 *  +---------------------------------------------------------------+
 * </pre>
 */
public final class RekeyFlyweight {
  /** Offset of the new epoch (u32, > 0 as a Java int). */
  public static final int EPOCH_OFFSET = 0;

  /** The body length (fixed). */
  public static final int LENGTH = EPOCH_OFFSET + 4;

  private byte[] buffer;
  private int offset;
  private int length;

  /**
   * Wraps a body: {@code length} is the body length when reading, the capacity when encoding.
   *
   * @return this
   */
  public RekeyFlyweight wrap(byte[] buffer, int offset, int length) {
    this.buffer = buffer;
    this.offset = offset;
    this.length = length;
    return this;
  }

  /**
   * Encodes the body.
   *
   * @param epoch the new epoch, > 0
   * @return the body length
   */
  public int encode(int epoch) {
    Bytes.positive(epoch, "epoch");
    Bytes.capacity(length, LENGTH, "REKEY");
    Bytes.putInt(buffer, offset + EPOCH_OFFSET, epoch);
    return LENGTH;
  }

  /**
   * Checks the wrapped body.
   *
   * @return this
   * @throws ProtocolException what is wrong
   */
  public RekeyFlyweight validate() {
    Bytes.exactly(length, LENGTH, "REKEY");
    Bytes.positive(epoch(), "epoch");
    return this;
  }

  /** The new epoch. */
  public int epoch() {
    return Bytes.getInt(buffer, offset + EPOCH_OFFSET);
  }
}
