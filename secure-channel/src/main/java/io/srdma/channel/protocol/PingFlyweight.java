package io.srdma.channel.protocol;

/**
 * PING and PONG, either direction: PING asks for a PONG with the same request id and the same
 * payload (a liveness check under the request deadline). One flyweight for both. Big-endian.
 *
 * <pre>
 *   0                   1                   2                   3
 *   0 1 2 3 4 5 6 7 8 9 0 1 2 3 4 5 6 7 8 9 0 1 2 3 4 5 6 7 8 9 0 1
 *  +---------------------------------------------------------------+
 *  |                 opaque payload (64 bits)                      |
 *  |                                                               |
 *  +---------------------------------------------------------------+
 * </pre>
 */
public final class PingFlyweight {
  /** Offset of the opaque payload (64 bits, echoed). */
  public static final int PAYLOAD_OFFSET = 0;

  /** The body length (fixed). */
  public static final int LENGTH = PAYLOAD_OFFSET + 8;

  private byte[] buffer;
  private int offset;
  private int length;

  /**
   * Wraps a body: {@code length} is the body length when reading, the capacity when encoding.
   *
   * @return this
   */
  public PingFlyweight wrap(byte[] buffer, int offset, int length) {
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
  public int encode(long payload) {

    Bytes.capacity(length, LENGTH, "PING/PONG");
    Bytes.putLong(buffer, offset + PAYLOAD_OFFSET, payload);
    return LENGTH;
  }

  /**
   * Checks the wrapped body.
   *
   * @return this
   * @throws ProtocolException what is wrong
   */
  public PingFlyweight validate() {
    Bytes.exactly(length, LENGTH, "PING/PONG");

    return this;
  }

  /** The opaque payload. */
  public long payload() {
    return Bytes.getLong(buffer, offset + PAYLOAD_OFFSET);
  }
}
