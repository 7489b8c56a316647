package io.srdma.verbs.soft;

import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.channels.SelectionKey;
import java.nio.channels.SocketChannel;

/**
 * A {@link Responder}'s responses on their way to the peer: ACKs, NAKs and HELLO answers are staged
 * into one small direct buffer and written before the state machine's next phase runs, each wait
 * for the peer to read them bounded by the transport timeout. One per responder, driven by its loop
 * thread only; allocates nothing after construction.
 */
final class ResponderTx {
  private static final int TX_SIZE = 16 * ResponseFlyweight.LENGTH;

  private final Responder r;
  private final SocketChannel channel;
  private final ResponseFlyweight response;

  /** Responses not yet written, in fill mode. */
  private final ByteBuffer tx = ByteBuffer.allocateDirect(TX_SIZE);

  ResponderTx(Responder r, SocketChannel channel, ResponseFlyweight response) {
    this.r = r;
    this.channel = channel;
    this.response = response;
  }

  /** Whether responses are staged and not written yet. */
  boolean pending() {
    return tx.position() > 0;
  }

  void stage(byte type, byte syndrome, int responsePsn, int responseLength) {
    response.wrap(tx, tx.position()).encode(type, syndrome, responsePsn, responseLength);
    tx.position(tx.position() + ResponseFlyweight.LENGTH);
  }

  /**
   * Writes the staged responses.
   *
   * @return true when all are written; false when waiting for the socket (bounded)
   */
  boolean flush() throws IOException {
    tx.flip();
    int n;
    try {
      n = channel.write(tx);
    } finally {
      tx.compact();
    }
    if (tx.position() == 0) {
      if (r.phase == Responder.HEADER && r.deadline != Responder.NO_DEADLINE) {
        r.deadline = Responder.NO_DEADLINE;
      }
      return true;
    }
    if (n > 0 || !r.interestedIn(SelectionKey.OP_WRITE)) {
      // Progress (or the first try): a fresh bound for the peer to read its responses.
      return r.waitFor(SelectionKey.OP_WRITE, r.writeDeadline());
    }
    if (Responder.passed(r.deadline)) {
      throw new IOException("peer did not read its responses in time");
    }
    return r.waitFor(SelectionKey.OP_WRITE, r.deadline);
  }
}
