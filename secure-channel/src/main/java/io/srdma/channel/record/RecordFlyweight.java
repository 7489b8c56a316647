package io.srdma.channel.record;

/**
 * The header of a sealed record, over a byte array. Big-endian. The record is the header, the
 * ciphertext ({@code length} bytes) and the 16-byte GCM tag.
 *
 * <pre>
 *   0                   1                   2                   3
 *   0 1 2 3 4 5 6 7 8 9 0 1 2 3 4 5 6 7 8 9 0 1 2 3 4 5 6 7 8 9 0 1
 *  +---------------+---------------+-------------------------------+
 *  |    version    |     flags     |           reserved (0)        |
 *  +---------------+---------------+-------------------------------+
 *  |                             epoch                             |
 *  +---------------------------------------------------------------+
 *  |                     sequence (64 bits)                        |
 *  |                                                               |
 *  +---------------------------------------------------------------+
 *  |                  length (ciphertext bytes)                    |
 *  +---------------------------------------------------------------+
 *  |  ciphertext ...                                               |
 *  +---------------------------------------------------------------+
 *  |  GCM tag (16 bytes)                                           |
 *  +---------------------------------------------------------------+
 * </pre>
 */
final class RecordFlyweight {
  static final int VERSION_OFFSET = 0;
  static final int FLAGS_OFFSET = VERSION_OFFSET + 1;
  static final int RESERVED_OFFSET = FLAGS_OFFSET + 1;
  static final int EPOCH_OFFSET = RESERVED_OFFSET + 2;
  static final int SEQUENCE_OFFSET = EPOCH_OFFSET + 4;
  static final int LENGTH_OFFSET = SEQUENCE_OFFSET + 8;
  static final int HEADER_LENGTH = LENGTH_OFFSET + 4;
  static final int TAG_LENGTH = 16;
  static final byte VERSION = 1;

  private byte[] buffer;
  private int offset;

  RecordFlyweight wrap(byte[] buffer, int offset) {
    this.buffer = buffer;
    this.offset = offset;
    return this;
  }

  RecordFlyweight encode(int epoch, long sequence, int length) {
    buffer[offset + VERSION_OFFSET] = VERSION;
    buffer[offset + FLAGS_OFFSET] = 0;
    putShort(RESERVED_OFFSET, 0);
    putInt(EPOCH_OFFSET, epoch);
    putInt(SEQUENCE_OFFSET, (int) (sequence >>> 32));
    putInt(SEQUENCE_OFFSET + 4, (int) sequence);
    putInt(LENGTH_OFFSET, length);
    return this;
  }

  byte version() {
    return buffer[offset + VERSION_OFFSET];
  }

  byte flags() {
    return buffer[offset + FLAGS_OFFSET];
  }

  int reserved() {
    return ((buffer[offset + RESERVED_OFFSET] & 0xFF) << 8)
        | (buffer[offset + RESERVED_OFFSET + 1] & 0xFF);
  }

  int epoch() {
    return getInt(EPOCH_OFFSET);
  }

  long sequence() {
    return ((long) getInt(SEQUENCE_OFFSET) << 32) | (getInt(SEQUENCE_OFFSET + 4) & 0xFFFF_FFFFL);
  }

  int length() {
    return getInt(LENGTH_OFFSET);
  }

  private int getInt(int at) {
    int i = offset + at;
    return ((buffer[i] & 0xFF) << 24)
        | ((buffer[i + 1] & 0xFF) << 16)
        | ((buffer[i + 2] & 0xFF) << 8)
        | (buffer[i + 3] & 0xFF);
  }

  private void putInt(int at, int v) {
    int i = offset + at;
    buffer[i] = (byte) (v >>> 24);
    buffer[i + 1] = (byte) (v >>> 16);
    buffer[i + 2] = (byte) (v >>> 8);
    buffer[i + 3] = (byte) v;
  }

  private void putShort(int at, int v) {
    int i = offset + at;
    buffer[i] = (byte) (v >>> 8);
    buffer[i + 1] = (byte) v;
  }
}
