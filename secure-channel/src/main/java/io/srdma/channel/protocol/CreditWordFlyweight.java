package io.srdma.channel.protocol;

import io.srdma.channel.protocol.ProtocolException.Reason;

/**
 * CREDIT_WORD, client to server: where the host writes receive credits ({@link
 * Capabilities#RECEIVE_CREDITS}). A 4-byte word in the client's own registration, remote-writable,
 * reached only through this session's queue pair; the host RDMA-WRITEs into it the low 32 bits
 * (big-endian u32) of the count of the session's receives it has reposted. Sent once, between
 * HELLO_ACK and the client's KEY_CONFIRM, iff the capability was chosen. No answer. Big-endian.
 *
 * <pre>
 *   0                   1                   2                   3
 *   0 1 2 3 4 5 6 7 8 9 0 1 2 3 4 5 6 7 8 9 0 1 2 3 4 5 6 7 8 9 0 1
 *  +---------------------------------------------------------------+
 *  |            address of the word (u64, multiple of 4)           |
 *  |                                                               |
 *  +---------------------------------------------------------------+
 *  |                             rkey                              |
 *  +---------------------------------------------------------------+
 * </pre>
 */
public final class CreditWordFlyweight {
  /** Offset of the word's address in the client's registration (u64, a multiple of 4). */
  public static final int ADDRESS_OFFSET = 0;

  /** Offset of the rkey of the client's registration (u32). */
  public static final int RKEY_OFFSET = ADDRESS_OFFSET + 8;

  /** The body length (fixed). */
  public static final int LENGTH = RKEY_OFFSET + 4;

  private byte[] buffer;
  private int offset;
  private int length;

  /**
   * Wraps a body: {@code length} is the body length when reading, the capacity when encoding.
   *
   * @return this
   */
  public CreditWordFlyweight wrap(byte[] buffer, int offset, int length) {
    this.buffer = buffer;
    this.offset = offset;
    this.length = length;
    return this;
  }

  /**
   * Encodes the body.
   *
   * @param address the word's address, a multiple of 4 (any u64 otherwise)
   * @param rkey the registration's rkey
   * @return the body length
   * @throws ProtocolException BAD_VALUE for an address that is not 4-byte aligned
   */
  public int encode(long address, int rkey) {
    aligned(address);
    Bytes.capacity(length, LENGTH, "CREDIT_WORD");
    Bytes.putLong(buffer, offset + ADDRESS_OFFSET, address);
    Bytes.putInt(buffer, offset + RKEY_OFFSET, rkey);
    return LENGTH;
  }

  /**
   * Checks the wrapped body.
   *
   * @return this
   * @throws ProtocolException what is wrong
   */
  public CreditWordFlyweight validate() {
    Bytes.exactly(length, LENGTH, "CREDIT_WORD");
    aligned(address());
    return this;
  }

  /** The word's address in the client's registration (a u64 in a Java long). */
  public long address() {
    return Bytes.getLong(buffer, offset + ADDRESS_OFFSET);
  }

  /** The rkey of the client's registration. */
  public int rkey() {
    return Bytes.getInt(buffer, offset + RKEY_OFFSET);
  }

  // an RNIC writes an aligned word in one piece; the client reads it as one
  private static void aligned(long address) {
    if ((address & 3) != 0) {
      throw new ProtocolException(
          Reason.BAD_VALUE,
          "credit word address 0x" + Long.toHexString(address) + " is not 4-byte aligned");
    }
  }
}
