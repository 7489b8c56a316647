package io.srdma.verbs.ibv;

import io.srdma.verbs.VerbsException;
import java.nio.ByteBuffer;

/**
 * The ibv provider's address in {@link io.srdma.verbs.ConnectionInfo}: 19 bytes, {@code gid[16] |
 * lid u16 big-endian | port u8}. RoCE peers are reached by GID (LID is 0 there); InfiniBand peers
 * by LID.
 */
record IbvAddress(byte[] gid, int lid, int port) {
  static final int LENGTH = Structs.GID_SIZE + 3;

  byte[] encode() {
    return ByteBuffer.allocate(LENGTH).put(gid).putShort((short) lid).put((byte) port).array();
  }

  static IbvAddress decode(byte[] address) {
    if (address.length != LENGTH) {
      throw new VerbsException(
          VerbsException.Reason.INVALID_ARGUMENT,
          "modify_qp",
          "an ibv address is "
              + LENGTH
              + " bytes (GID, LID, port), got "
              + address.length
              + ": is the peer on another provider?");
    }
    ByteBuffer b = ByteBuffer.wrap(address);
    byte[] gid = new byte[Structs.GID_SIZE];
    b.get(gid);
    return new IbvAddress(gid, b.getShort() & 0xFFFF, b.get() & 0xFF);
  }
}
