package io.srdma.channel.protocol;

/**
 * KEY_CONFIRM, either direction: the sender's key confirmation value for an epoch (docs/keys.md:
 * the initiator sends {@code confirm initiator}, the responder {@code confirm responder}). Sent
 * once each way after HELLO_ACK, for epoch 0. Big-endian.
 *
 * <pre>
 *   0                   1                   2                   3
 *   0 1 2 3 4 5 6 7 8 9 0 1 2 3 4 5 6 7 8 9 0 1 2 3 4 5 6 7 8 9 0 1
 *  +---------------------------------------------------------------+
 *  |                            epoch                              |
 *  +---------------------------------------------------------------+
 *  |               confirmation value (32 bytes)                   |
 *  |                              ...                              |
 *  +---------------------------------------------------------------+
 * </pre>
 */
public final class KeyConfirmFlyweight {
  /** Offset of the epoch (u32, ≥ 0 as a Java int). */
  public static final int EPOCH_OFFSET = 0;

  /** Offset of the confirmation value. */
  public static final int CONFIRMATION_OFFSET = EPOCH_OFFSET + 4;

  /** Length of the confirmation value. */
  public static final int CONFIRMATION_LENGTH = Wire.CONFIRMATION_LENGTH;

  /** The body length (fixed). */
  public static final int LENGTH = CONFIRMATION_OFFSET + CONFIRMATION_LENGTH;

  private byte[] buffer;
  private int offset;
  private int length;

  /**
   * Wraps a body: {@code length} is the body length when reading, the capacity when encoding.
   *
   * @return this
   */
  public KeyConfirmFlyweight wrap(byte[] buffer, int offset, int length) {
    this.buffer = buffer;
    this.offset = offset;
    this.length = length;
    return this;
  }

  /**
   * Encodes the body.
   *
   * @param epoch the epoch confirmed, ≥ 0
   * @param confirmation the confirmation value, 32 bytes
   * @return the body length
   */
  public int encode(int epoch, byte[] confirmation) {
    Bytes.nonNegative(epoch, "epoch");
    Bytes.fixed(confirmation, CONFIRMATION_LENGTH, "confirmation");
    Bytes.capacity(length, LENGTH, "KEY_CONFIRM");
    Bytes.putInt(buffer, offset + EPOCH_OFFSET, epoch);
    System.arraycopy(confirmation, 0, buffer, offset + CONFIRMATION_OFFSET, CONFIRMATION_LENGTH);
    return LENGTH;
  }

  /**
   * Checks the wrapped body.
   *
   * @return this
   * @throws ProtocolException what is wrong
   */
  public KeyConfirmFlyweight validate() {
    Bytes.exactly(length, LENGTH, "KEY_CONFIRM");
    Bytes.nonNegative(epoch(), "epoch");
    return this;
  }

  /** The epoch confirmed. */
  public int epoch() {
    return Bytes.getInt(buffer, offset + EPOCH_OFFSET);
  }

  /** A copy of the confirmation value (compare it with {@code MessageDigest.isEqual}). */
  public byte[] confirmation() {
    return Wire.copy(buffer, offset + CONFIRMATION_OFFSET, CONFIRMATION_LENGTH);
  }
}
