package io.srdma.channel;

import java.lang.invoke.MethodHandles;
import java.lang.invoke.VarHandle;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;

/**
 * The registered word the host writes this session's receive credits into (capability {@code
 * RECEIVE_CREDITS}, docs/protocol.md): the low 32 bits, big-endian, of the number of the session's
 * receives the host has reposted. Read as one aligned 4-byte load (a write by the RNIC or the soft
 * provider is never seen half done) and widened against the last count read. The count never moves
 * backwards and never past the records this client posted: a wrong word from the host cannot make
 * the client post more than the receives the host can have.
 *
 * <p>Not thread-safe: read under the writer's lock.
 */
final class CreditWord {
  /** Bytes registered for the word. */
  static final int BYTES = Integer.BYTES;

  private static final VarHandle WORD =
      MethodHandles.byteBufferViewVarHandle(int[].class, ByteOrder.BIG_ENDIAN);

  private final ByteBuffer word;
  private long credited;

  /** The word at index 0 of {@code word} (direct, registered, 4-byte aligned). */
  CreditWord(ByteBuffer word) {
    this.word = word;
  }

  /**
   * The receives the host has reposted, as far as this client can tell, with {@code posted} records
   * posted so far.
   */
  long credited(long posted) {
    int w = (int) WORD.getAcquire(word, 0);
    long c = credited + ((w - (int) credited) & 0xFFFF_FFFFL);
    if (c <= posted) {
      credited = c;
    }
    return credited;
  }
}
