package io.srdma.channel.protocol;

import io.srdma.channel.protocol.ProtocolException.Reason;
import io.srdma.verbs.ConnectionInfo;

/**
 * HELLO_ACK, server to client, the answer to HELLO (same request id): the version chosen, the
 * capabilities both sides share, the server's ephemeral X25519 public key, the session id the
 * server chose and the server queue pair's connection info. After it both sides hold every input of
 * the key schedule. With {@link Capabilities#RECEIVE_DEPTH} shared it also says how many receives
 * the host keeps posted for the session (zero otherwise, as in the first version). Big-endian.
 *
 * <pre>
 *   0                   1                   2                   3
 *   0 1 2 3 4 5 6 7 8 9 0 1 2 3 4 5 6 7 8 9 0 1 2 3 4 5 6 7 8 9 0 1
 *  +---------------+---------------+-------------------------------+
 *  |    version    | reserved (0)  |  receive depth (0 unless cap) |
 *  +---------------+---------------+-------------------------------+
 *  |                         capabilities                          |
 *  +---------------------------------------------------------------+
 *  |              server X25519 public key (32 bytes)              |
 *  |                              ...                              |
 *  +---------------------------------------------------------------+
 *  |                    session id (16 bytes)                      |
 *  |                              ...                              |
 *  +-------------------------------+-------------------------------+
 *  |    connection info length     |  connection info (10..74)    ...
 *  +-------------------------------+-------------------------------+
 * </pre>
 */
public final class HelloAckFlyweight {
  /** Offset of the protocol version chosen (u8, ≥ 1, ≤ the client's max version). */
  public static final int VERSION_OFFSET = 0;

  /** Offset of a reserved zero byte. */
  public static final int RESERVED_OFFSET = VERSION_OFFSET + 1;

  /**
   * Offset of the receives the host keeps posted for the session (u16): 1 or more when {@link
   * Capabilities#RECEIVE_DEPTH} is among the shared capabilities, else 0.
   */
  public static final int RECEIVE_DEPTH_OFFSET = RESERVED_OFFSET + 1;

  /** Offset of the shared capabilities (u32). */
  public static final int CAPABILITIES_OFFSET = RECEIVE_DEPTH_OFFSET + 2;

  /** Offset of the server's X25519 public key. */
  public static final int PUBLIC_KEY_OFFSET = CAPABILITIES_OFFSET + 4;

  /** Offset of the session id. */
  public static final int SESSION_ID_OFFSET = PUBLIC_KEY_OFFSET + Wire.KEY_LENGTH;

  /** Offset of the connection info's length (u16). */
  public static final int CONNECTION_INFO_LENGTH_OFFSET =
      SESSION_ID_OFFSET + Wire.SESSION_ID_LENGTH;

  /** Offset of the connection info ({@link ConnectionInfo#encode()}). */
  public static final int CONNECTION_INFO_OFFSET = CONNECTION_INFO_LENGTH_OFFSET + 2;

  /** Length of the session id. */
  public static final int SESSION_ID_LENGTH = Wire.SESSION_ID_LENGTH;

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
  public HelloAckFlyweight wrap(byte[] buffer, int offset, int length) {
    this.buffer = buffer;
    this.offset = offset;
    this.length = length;
    return this;
  }

  /**
   * Encodes the body.
   *
   * @param version the protocol version chosen, 1..255
   * @param capabilities the shared capabilities
   * @param receiveDepth the receives kept posted for the session, 1..65535 when {@code
   *     capabilities} has {@link Capabilities#RECEIVE_DEPTH}, else 0
   * @param publicKey the server's X25519 public key, 32 bytes
   * @param sessionId the session id, 16 bytes
   * @param info the server queue pair's connection info
   * @return the body length
   * @throws ProtocolException when a value is out of range
   */
  public int encode(
      int version,
      int capabilities,
      int receiveDepth,
      byte[] publicKey,
      byte[] sessionId,
      ConnectionInfo info) {
    if (version < 1 || version > 255) {
      throw new ProtocolException(Reason.BAD_VALUE, "version " + version);
    }
    checkReceiveDepth(capabilities, receiveDepth);
    Bytes.fixed(publicKey, Wire.KEY_LENGTH, "public key");
    Bytes.fixed(sessionId, SESSION_ID_LENGTH, "session id");
    byte[] ci = info.encode();
    int end = CONNECTION_INFO_OFFSET + ci.length;
    Bytes.capacity(length, end, "HELLO_ACK");
    Bytes.putU8(buffer, offset + VERSION_OFFSET, version);
    Bytes.putU8(buffer, offset + RESERVED_OFFSET, 0);
    Bytes.putU16(buffer, offset + RECEIVE_DEPTH_OFFSET, receiveDepth);
    Bytes.putInt(buffer, offset + CAPABILITIES_OFFSET, capabilities);
    System.arraycopy(publicKey, 0, buffer, offset + PUBLIC_KEY_OFFSET, Wire.KEY_LENGTH);
    System.arraycopy(sessionId, 0, buffer, offset + SESSION_ID_OFFSET, SESSION_ID_LENGTH);
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
  public HelloAckFlyweight validate() {
    Bytes.atLeast(length, MIN_LENGTH, "HELLO_ACK");
    if (version() < 1) {
      throw new ProtocolException(Reason.BAD_VALUE, "version 0");
    }
    Bytes.zero(buffer, offset + RESERVED_OFFSET, 1, "HELLO_ACK reserved");
    checkReceiveDepth(capabilities(), receiveDepth());
    int n = Bytes.getU16(buffer, offset + CONNECTION_INFO_LENGTH_OFFSET);
    Bytes.exactly(length, CONNECTION_INFO_OFFSET + n, "HELLO_ACK");
    connectionInfo();
    return this;
  }

  /** The protocol version chosen. */
  public int version() {
    return Bytes.getU8(buffer, offset + VERSION_OFFSET);
  }

  /**
   * The receives the host keeps posted for the session: 1 or more when {@link
   * Capabilities#RECEIVE_DEPTH} is shared, else 0 (not said).
   */
  public int receiveDepth() {
    return Bytes.getU16(buffer, offset + RECEIVE_DEPTH_OFFSET);
  }

  private static void checkReceiveDepth(int capabilities, int receiveDepth) {
    boolean said = (capabilities & Capabilities.RECEIVE_DEPTH) != 0;
    if (said ? receiveDepth < 1 || receiveDepth > 0xFFFF : receiveDepth != 0) {
      throw new ProtocolException(
          Reason.BAD_VALUE,
          "receive depth "
              + receiveDepth
              + (said ? " (must be 1..65535)" : " without the RECEIVE_DEPTH capability"));
    }
  }

  /** The capabilities both sides share. */
  public int capabilities() {
    return Bytes.getInt(buffer, offset + CAPABILITIES_OFFSET);
  }

  /** A copy of the server's X25519 public key. */
  public byte[] publicKey() {
    return Wire.copy(buffer, offset + PUBLIC_KEY_OFFSET, Wire.KEY_LENGTH);
  }

  /** A copy of the session id. */
  public byte[] sessionId() {
    return Wire.copy(buffer, offset + SESSION_ID_OFFSET, SESSION_ID_LENGTH);
  }

  /** The server queue pair's connection info. */
  public ConnectionInfo connectionInfo() {
    int n = Bytes.getU16(buffer, offset + CONNECTION_INFO_LENGTH_OFFSET);
    return Bytes.connectionInfo(buffer, offset + CONNECTION_INFO_OFFSET, n);
  }
}
