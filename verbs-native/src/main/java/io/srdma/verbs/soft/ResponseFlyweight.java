package io.srdma.verbs.soft;

import java.nio.ByteBuffer;

/**
 * A response frame header, responder → requester. Big-endian.
 *
 * <pre>
 *   0                   1                   2                   3
 *   0 1 2 3 4 5 6 7 8 9 0 1 2 3 4 5 6 7 8 9 0 1 2 3 4 5 6 7 8 9 0 1
 *  +---------------+---------------+---------------+---------------+
 *  |    version    |     type      |   syndrome    |   reserved    |
 *  +---------------+---------------+---------------+---------------+
 *  |      packet sequence number (ACK: cumulative, up to this)     |
 *  +---------------------------------------------------------------+
 *  |              length (READ_RESP: payload bytes)                |
 *  +---------------------------------------------------------------+
 *  |                           reserved                            |
 *  +---------------------------------------------------------------+
 *  |  payload (READ_RESP): length bytes                            ...
 * </pre>
 *
 * The syndrome of a NAK is the {@link io.srdma.verbs.WcStatus} code the requester completes with.
 */
final class ResponseFlyweight {
  static final int VERSION_OFFSET = 0;
  static final int TYPE_OFFSET = VERSION_OFFSET + 1;
  static final int SYNDROME_OFFSET = TYPE_OFFSET + 1;
  static final int RESERVED1_OFFSET = SYNDROME_OFFSET + 1;
  static final int PSN_OFFSET = RESERVED1_OFFSET + 1;
  static final int LENGTH_OFFSET = PSN_OFFSET + 4;
  static final int RESERVED2_OFFSET = LENGTH_OFFSET + 4;
  static final int LENGTH = RESERVED2_OFFSET + 4;

  static final byte TYPE_ACK = 1;
  static final byte TYPE_NAK = 2;
  static final byte TYPE_READ_RESP = 3;
  static final byte TYPE_HELLO_ACK = 4;
  static final byte TYPE_HELLO_NAK = 5;

  static final byte HELLO_NAK_NO_QP = 1;
  static final byte HELLO_NAK_BUSY = 2;

  private ByteBuffer buffer;
  private int offset;

  ResponseFlyweight wrap(ByteBuffer buffer, int offset) {
    this.buffer = buffer;
    this.offset = offset;
    return this;
  }

  ResponseFlyweight encode(byte type, byte syndrome, int psn, int length) {
    buffer.put(offset + VERSION_OFFSET, RequestFlyweight.VERSION);
    buffer.put(offset + TYPE_OFFSET, type);
    buffer.put(offset + SYNDROME_OFFSET, syndrome);
    buffer.put(offset + RESERVED1_OFFSET, (byte) 0);
    buffer.putInt(offset + PSN_OFFSET, psn);
    buffer.putInt(offset + LENGTH_OFFSET, length);
    buffer.putInt(offset + RESERVED2_OFFSET, 0);
    return this;
  }

  byte version() {
    return buffer.get(offset + VERSION_OFFSET);
  }

  byte type() {
    return buffer.get(offset + TYPE_OFFSET);
  }

  byte syndrome() {
    return buffer.get(offset + SYNDROME_OFFSET);
  }

  int psn() {
    return buffer.getInt(offset + PSN_OFFSET);
  }

  int length() {
    return buffer.getInt(offset + LENGTH_OFFSET);
  }

  /** Whether both reserved fields are zero, as every responder writes them. */
  boolean reservedZero() {
    return buffer.get(offset + RESERVED1_OFFSET) == 0
        && buffer.getInt(offset + RESERVED2_OFFSET) == 0;
  }
}
