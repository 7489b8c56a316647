package io.srdma.verbs.soft;

import java.nio.ByteBuffer;

/**
 * A request frame header, requester → responder, over a buffer. Big-endian.
 *
 * <pre>
 *   0                   1                   2                   3
 *   0 1 2 3 4 5 6 7 8 9 0 1 2 3 4 5 6 7 8 9 0 1 2 3 4 5 6 7 8 9 0 1
 *  +---------------+---------------+---------------+---------------+
 *  |    version    |    opcode     |     flags     |   reserved    |
 *  +---------------+---------------+---------------+---------------+
 *  |                     packet sequence number                    |
 *  +---------------------------------------------------------------+
 *  |            length (payload bytes; READ: bytes wanted)         |
 *  +---------------------------------------------------------------+
 *  |                 immediate data (HELLO: source QPN)            |
 *  +---------------------------------------------------------------+
 *  |                 remote address (HELLO: magic)                 |
 *  |                                                               |
 *  +---------------------------------------------------------------+
 *  |                   rkey (HELLO: destination QPN)               |
 *  +---------------------------------------------------------------+
 *  |                           reserved                            |
 *  +---------------------------------------------------------------+
 *  |  payload (WRITE, SEND): length bytes                          ...
 * </pre>
 */
final class RequestFlyweight {
  static final int VERSION_OFFSET = 0;
  static final int OPCODE_OFFSET = VERSION_OFFSET + 1;
  static final int FLAGS_OFFSET = OPCODE_OFFSET + 1;
  static final int RESERVED1_OFFSET = FLAGS_OFFSET + 1;
  static final int PSN_OFFSET = RESERVED1_OFFSET + 1;
  static final int LENGTH_OFFSET = PSN_OFFSET + 4;
  static final int IMM_OFFSET = LENGTH_OFFSET + 4;
  static final int ADDRESS_OFFSET = IMM_OFFSET + 4;
  static final int RKEY_OFFSET = ADDRESS_OFFSET + 8;
  static final int RESERVED2_OFFSET = RKEY_OFFSET + 4;
  static final int LENGTH = RESERVED2_OFFSET + 4;

  static final byte VERSION = 1;

  static final byte OP_WRITE = 1;
  static final byte OP_WRITE_IMM = 2;
  static final byte OP_SEND = 3;
  static final byte OP_SEND_IMM = 4;
  static final byte OP_READ = 5;
  static final byte OP_HELLO = 0x7F;

  /** Responder must acknowledge this request (signaled, or periodic). */
  static final byte FLAG_ACK_REQ = 1;

  /** "SRDMASFT": marks a HELLO so that stray connections are dropped early. */
  static final long HELLO_MAGIC = 0x5352444D41534654L;

  private ByteBuffer buffer;
  private int offset;

  RequestFlyweight wrap(ByteBuffer buffer, int offset) {
    this.buffer = buffer;
    this.offset = offset;
    return this;
  }

  RequestFlyweight encode(
      byte opcode, byte flags, int psn, int length, int imm, long address, int rkey) {
    buffer.put(offset + VERSION_OFFSET, VERSION);
    buffer.put(offset + OPCODE_OFFSET, opcode);
    buffer.put(offset + FLAGS_OFFSET, flags);
    buffer.put(offset + RESERVED1_OFFSET, (byte) 0);
    buffer.putInt(offset + PSN_OFFSET, psn);
    buffer.putInt(offset + LENGTH_OFFSET, length);
    buffer.putInt(offset + IMM_OFFSET, imm);
    buffer.putLong(offset + ADDRESS_OFFSET, address);
    buffer.putInt(offset + RKEY_OFFSET, rkey);
    buffer.putInt(offset + RESERVED2_OFFSET, 0);
    return this;
  }

  byte version() {
    return buffer.get(offset + VERSION_OFFSET);
  }

  byte opcode() {
    return buffer.get(offset + OPCODE_OFFSET);
  }

  byte flags() {
    return buffer.get(offset + FLAGS_OFFSET);
  }

  boolean reservedZero() {
    return buffer.get(offset + RESERVED1_OFFSET) == 0
        && buffer.getInt(offset + RESERVED2_OFFSET) == 0;
  }

  int psn() {
    return buffer.getInt(offset + PSN_OFFSET);
  }

  int length() {
    return buffer.getInt(offset + LENGTH_OFFSET);
  }

  int imm() {
    return buffer.getInt(offset + IMM_OFFSET);
  }

  long address() {
    return buffer.getLong(offset + ADDRESS_OFFSET);
  }

  int rkey() {
    return buffer.getInt(offset + RKEY_OFFSET);
  }

  static boolean carriesPayload(byte opcode) {
    return opcode == OP_WRITE
        || opcode == OP_WRITE_IMM
        || opcode == OP_SEND
        || opcode == OP_SEND_IMM;
  }

  static boolean isKnown(byte opcode) {
    return opcode >= OP_WRITE && opcode <= OP_READ;
  }
}
