package io.srdma.channel.protocol;

import io.srdma.channel.protocol.ProtocolException.Reason;
import io.srdma.verbs.ConnectionInfo;

/**
 * HELLO, client to server, the first frame after the TLS handshake: the client's highest protocol
 * version, its capabilities, its ephemeral X25519 public key and its queue pair's connection info.
 * Big-endian.
 *
 * <pre>
 *   0                   1                   2                   3
 *   0 1 2 3 4 5 6 7 8 9 0 1 2 3 4 5 6 7 8 9 0 1 2 3 4 5 6 7 8 9 0 1
 *  +---------------+-----------------------------------------------+
 *  |  max version  |                 reserved (0)                  |
 *  +---------------+-----------------------------------------------+
 *  |                         capabilities                          |
 *  +---------------------------------------------------------------+
 *  |              client X25519 public key (32 bytes)              |
 *  |                              ...                              |
 *  +-------------------------------+-------------------------------+
 *  |    connection info length     |  connection info (10..74)    ...
 *  +-------------------------------+-------------------------------+
 * </pre>
 */
public final class HelloFlyweight {
  /** Offset of the highest protocol version the client speaks (u8, ≥ 1). */
  public static final int MAX_VERSION_OFFSET = 0;

  /** Offset of three reserved zero bytes. */
  public static final int RESERVED_OFFSET = MAX_VERSION_OFFSET + 1;

  /** Offset of the capabilities bitmap (u32). */
  public static final int CAPABILITIES_OFFSET = RESERVED_OFFSET + 3;

  /** Offset of the client's X25519 public key. */
  public static final int PUBLIC_KEY_OFFSET = CAPABILITIES_OFFSET + 4;

  /** Offset of the connection info's length (u16). */
  public static final int CONNECTION_INFO_LENGTH_OFFSET = PUBLIC_KEY_OFFSET + Wire.KEY_LENGTH;

  /** Offset of the connection info ({@link ConnectionInfo#encode()}). */
  public static final int CONNECTION_INFO_OFFSET = CONNECTION_INFO_LENGTH_OFFSET + 2;

  /** Shortest body. */
  public static final int MIN_LENGTH = CONNECTION_INFO_OFFSET + Bytes.MIN_CONNECTION_INFO;

  /** Longest body. */
  public static final int MAX_LENGTH = CONNECTION_INFO_OFFSET + Bytes.MAX_CONNECTION_INFO;

  private byte[] buffer;
  private int offset;
  private int length;

  /**
   * Wraps a body: {@code length} is the body length when reading, the capacity when encoding.
   *
   * @return this
   */
  public HelloFlyweight wrap(byte[] buffer, int offset, int length) {
    this.buffer = buffer;
    this.offset = offset;
    this.length = length;
    return this;
  }

  /**
   * Encodes the body.
   *
   * @param maxVersion the highest protocol version the client speaks, 1..255
   * @param capabilities the capabilities bitmap
   * @param publicKey the client's X25519 public key, 32 bytes
   * @param info the client queue pair's connection info
   * @return the body length
   * @throws ProtocolException when a value is out of range
   */
  public int encode(int maxVersion, int capabilities, byte[] publicKey, ConnectionInfo info) {
    if (maxVersion < 1 || maxVersion > 255) {
      throw new ProtocolException(Reason.BAD_VALUE, "max version " + maxVersion);
    }
    Bytes.fixed(publicKey, Wire.KEY_LENGTH, "public key");
    byte[] ci = info.encode();
    int end = CONNECTION_INFO_OFFSET + ci.length;
    Bytes.capacity(length, end, "HELLO");
    Bytes.putU8(buffer, offset + MAX_VERSION_OFFSET, maxVersion);
    Bytes.putU8(buffer, offset + RESERVED_OFFSET, 0);
    Bytes.putU16(buffer, offset + RESERVED_OFFSET + 1, 0);
    Bytes.putInt(buffer, offset + CAPABILITIES_OFFSET, capabilities);
    System.arraycopy(publicKey, 0, buffer, offset + PUBLIC_KEY_OFFSET, Wire.KEY_LENGTH);
    Bytes.putU16(buffer, offset + CONNECTION_INFO_LENGTH_OFFSET, ci.length);
    System.arraycopy(ci, 0, buffer, offset + CONNECTION_INFO_OFFSET, ci.length);
    return end;
  }

  /**
   * Checks the wrapped body field by field.
   *
   * @return this
   * @throws ProtocolException what is wrong
   */
  public HelloFlyweight validate() {
    Bytes.atLeast(length, MIN_LENGTH, "HELLO");
    if (maxVersion() < 1) {
      throw new ProtocolException(Reason.BAD_VALUE, "max version 0");
    }
    Bytes.zero(buffer, offset + RESERVED_OFFSET, 3, "HELLO reserved");
    int n = Bytes.getU16(buffer, offset + CONNECTION_INFO_LENGTH_OFFSET);
    Bytes.exactly(length, CONNECTION_INFO_OFFSET + n, "HELLO");
    connectionInfo();
    return this;
  }

  /** The highest protocol version the client speaks. */
  public int maxVersion() {
    return Bytes.getU8(buffer, offset + MAX_VERSION_OFFSET);
  }

  /** The capabilities bitmap (no bit is defined in version 1; unknown bits are ignored). */
  public int capabilities() {
    return Bytes.getInt(buffer, offset + CAPABILITIES_OFFSET);
  }

  /** A copy of the client's X25519 public key. */
  public byte[] publicKey() {
    return Wire.copy(buffer, offset + PUBLIC_KEY_OFFSET, Wire.KEY_LENGTH);
  }

  /** The client queue pair's connection info. */
  public ConnectionInfo connectionInfo() {
    int n = Bytes.getU16(buffer, offset + CONNECTION_INFO_LENGTH_OFFSET);
    return Bytes.connectionInfo(buffer, offset + CONNECTION_INFO_OFFSET, n);
  }
}
