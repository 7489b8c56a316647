package io.srdma.channel.protocol;

/**
 * The header of every control-plane frame, over a byte array. Big-endian. The body follows it:
 * {@code body length} bytes, laid out by the message type's flyweight.
 *
 * <pre>
 *   0                   1                   2                   3
 *   0 1 2 3 4 5 6 7 8 9 0 1 2 3 4 5 6 7 8 9 0 1 2 3 4 5 6 7 8 9 0 1
 *  +-------------------------------+---------------+---------------+
 *  |       magic 0x5352 "SR"       |    version    |     type      |
 *  +-------------------------------+---------------+---------------+
 *  |          flags (0)            |         reserved (0)          |
 *  +-------------------------------+-------------------------------+
 *  |                         request id                            |
 *  +---------------------------------------------------------------+
 *  |                         body length                           |
 *  +---------------------------------------------------------------+
 *  |  body ...                                                     |
 *  +---------------------------------------------------------------+
 * </pre>
 */
public final class FrameHeaderFlyweight {
  /** Offset of the magic (u16). */
  public static final int MAGIC_OFFSET = 0;

  /** Offset of the protocol version (u8). */
  public static final int VERSION_OFFSET = MAGIC_OFFSET + 2;

  /** Offset of the {@link MessageType} code (u8). */
  public static final int TYPE_OFFSET = VERSION_OFFSET + 1;

  /** Offset of the flags (u16; version 1 defines none, so they are 0). */
  public static final int FLAGS_OFFSET = TYPE_OFFSET + 1;

  /** Offset of the reserved field (u16, 0). */
  public static final int RESERVED_OFFSET = FLAGS_OFFSET + 2;

  /** Offset of the request id (u32; 0 = none). */
  public static final int REQUEST_ID_OFFSET = RESERVED_OFFSET + 2;

  /** Offset of the body length (u32, read as a Java int: a value ≥ 2^31 is negative). */
  public static final int BODY_LENGTH_OFFSET = REQUEST_ID_OFFSET + 4;

  /** The header length; the body starts here. */
  public static final int HEADER_LENGTH = BODY_LENGTH_OFFSET + 4;

  /** {@code "SR"}. */
  public static final int MAGIC = 0x5352;

  /** The protocol version this build speaks. */
  public static final int VERSION = 1;

  private byte[] buffer;
  private int offset;

  /**
   * Wraps a header at {@code offset}.
   *
   * @return this
   */
  public FrameHeaderFlyweight wrap(byte[] buffer, int offset) {
    this.buffer = buffer;
    this.offset = offset;
    return this;
  }

  /**
   * Encodes a version-1 header.
   *
   * @return this
   */
  public FrameHeaderFlyweight encode(MessageType type, int requestId, int bodyLength) {
    Bytes.putU16(buffer, offset + MAGIC_OFFSET, MAGIC);
    Bytes.putU8(buffer, offset + VERSION_OFFSET, VERSION);
    Bytes.putU8(buffer, offset + TYPE_OFFSET, type.code());
    Bytes.putU16(buffer, offset + FLAGS_OFFSET, 0);
    Bytes.putU16(buffer, offset + RESERVED_OFFSET, 0);
    Bytes.putInt(buffer, offset + REQUEST_ID_OFFSET, requestId);
    Bytes.putInt(buffer, offset + BODY_LENGTH_OFFSET, bodyLength);
    return this;
  }

  /** The magic. */
  public int magic() {
    return Bytes.getU16(buffer, offset + MAGIC_OFFSET);
  }

  /** The protocol version. */
  public int version() {
    return Bytes.getU8(buffer, offset + VERSION_OFFSET);
  }

  /** The type code. */
  public int typeCode() {
    return Bytes.getU8(buffer, offset + TYPE_OFFSET);
  }

  /** The flags. */
  public int flags() {
    return Bytes.getU16(buffer, offset + FLAGS_OFFSET);
  }

  /** The reserved field. */
  public int reserved() {
    return Bytes.getU16(buffer, offset + RESERVED_OFFSET);
  }

  /** The request id. */
  public int requestId() {
    return Bytes.getInt(buffer, offset + REQUEST_ID_OFFSET);
  }

  /** The body length, negative when the u32 is ≥ 2^31. */
  public int bodyLength() {
    return Bytes.getInt(buffer, offset + BODY_LENGTH_OFFSET);
  }
}
