package io.srdma.verbs;

import java.nio.ByteBuffer;
import java.util.Arrays;
import java.util.HexFormat;

/**
 * What one side of an RC connection tells the other out of band before both move to RTR: queue pair
 * number, starting packet sequence number and a provider-specific address (soft: IP address and
 * responder port; ibv: GID, LID and port). Immutable.
 *
 * <p>Wire form ({@link #encode()}): {@code qpn u32 | psn u32 | addressLength u16 | address}.
 */
public final class ConnectionInfo {
  /** Largest address accepted by {@link #decode(byte[])}. */
  public static final int MAX_ADDRESS_LENGTH = 64;

  private final int qpn;
  private final int psn;
  private final byte[] address;

  /**
   * Creates connection info.
   *
   * @param qpn the queue pair number (24 bits)
   * @param psn the starting packet sequence number (24 bits)
   * @param address the provider-specific address, copied
   */
  public ConnectionInfo(int qpn, int psn, byte[] address) {
    if ((qpn & ~0xFFFFFF) != 0 || (psn & ~0xFFFFFF) != 0) {
      throw new VerbsException(
          VerbsException.Reason.INVALID_ARGUMENT, "connection_info", "qpn and psn are 24-bit");
    }
    if (address.length > MAX_ADDRESS_LENGTH) {
      throw new VerbsException(
          VerbsException.Reason.INVALID_ARGUMENT,
          "connection_info",
          "address longer than " + MAX_ADDRESS_LENGTH + " bytes");
    }
    this.qpn = qpn;
    this.psn = psn;
    this.address = address.clone();
  }

  /** The queue pair number. */
  public int qpn() {
    return qpn;
  }

  /** The starting packet sequence number. */
  public int psn() {
    return psn;
  }

  /** A copy of the provider-specific address. */
  public byte[] address() {
    return address.clone();
  }

  /** The wire form. */
  public byte[] encode() {
    return ByteBuffer.allocate(10 + address.length)
        .putInt(qpn)
        .putInt(psn)
        .putShort((short) address.length)
        .put(address)
        .array();
  }

  /**
   * Parses the wire form.
   *
   * @throws VerbsException INVALID_ARGUMENT when the bytes are not exactly one encoded value
   */
  public static ConnectionInfo decode(byte[] bytes) {
    if (bytes.length < 10) {
      throw new VerbsException(
          VerbsException.Reason.INVALID_ARGUMENT, "connection_info", "truncated: " + bytes.length);
    }
    ByteBuffer b = ByteBuffer.wrap(bytes);
    int qpn = b.getInt();
    int psn = b.getInt();
    int len = b.getShort() & 0xFFFF;
    if (len != b.remaining()) {
      throw new VerbsException(
          VerbsException.Reason.INVALID_ARGUMENT,
          "connection_info",
          "address length " + len + " but " + b.remaining() + " bytes follow");
    }
    byte[] address = new byte[len];
    b.get(address);
    return new ConnectionInfo(qpn, psn, address);
  }

  @Override
  public boolean equals(Object o) {
    return o instanceof ConnectionInfo c
        && c.qpn == qpn
        && c.psn == psn
        && Arrays.equals(c.address, address);
  }

  @Override
  public int hashCode() {
    return 31 * (31 * qpn + psn) + Arrays.hashCode(address);
  }

  @Override
  public String toString() {
    return "ConnectionInfo{qpn=0x"
        + Integer.toHexString(qpn)
        + ", address="
        + HexFormat.of().formatHex(address)
        + "}";
  }
}
