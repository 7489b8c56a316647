package io.srdma.host;

import io.srdma.channel.protocol.Capabilities;
import io.srdma.verbs.AccessFlags;
import io.srdma.verbs.MemoryRegion;
import io.srdma.verbs.ProtectionDomain;
import io.srdma.verbs.QueuePair;
import io.srdma.verbs.SendWorkRequest;
import io.srdma.verbs.VerbsException;
import io.srdma.verbs.WrOpcode;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.util.concurrent.atomic.LongAdder;

/**
 * One session's receive credits (capability {@code RECEIVE_CREDITS}, docs/protocol.md): the count
 * of the session's receives reposted since it began, RDMA-written (4 bytes, big-endian, the count's
 * low 32 bits; no immediate, so it needs no receive at the client and never waits on the client's
 * receive queue) into the word the client named in CREDIT_WORD, once {@link #every} reposts are
 * owed. The client keeps at most the receive depth of records posted beyond the count it last read,
 * so a host whose opener falls behind its RNIC holds the client back instead of running out of
 * receives (on an RNIC: the RNR NAK timer, ~245 ms a retry, and the session lost after the budget).
 *
 * <p>Each write reads its own of {@link #SOURCES} words, and at most {@link #MAX_IN_FLIGHT} are in
 * flight, so no word is rewritten while a write may still read it. A credit that cannot go now (the
 * send queue's lock is held by a grant's bind or invalidation, or {@link #MAX_IN_FLIGHT} writes are
 * in flight) stays owed: the opener thread tries again ({@link OpenerThread}).
 *
 * <p>Confined to the session's opener thread, except {@link #close} (after the queue pair closed,
 * under the send queue's lock).
 */
final class ReceiveCredits implements AutoCloseable {
  static final int SOURCES = 8;
  static final int MAX_IN_FLIGHT = 4;

  private final QueuePair qp;
  private final SessionSendQueue sendQueue;
  private final MemoryRegion source;
  private final ByteBuffer words;
  private final SendWorkRequest write;
  private final int every;
  private final LongAdder written; // the host's count of credit writes
  private long reposted;
  private long credited;
  private long writes; // credit writes posted
  private boolean closed; // guarded by the send queue's lock

  /**
   * Credits of a session whose host keeps {@code receiveDepth} receives posted, written to the
   * client's word at {@code address} under {@code rkey} through {@code qp}, each counted in {@code
   * written}.
   */
  ReceiveCredits(
      ProtectionDomain pd,
      QueuePair qp,
      SessionSendQueue sendQueue,
      long address,
      int rkey,
      int receiveDepth,
      LongAdder written) {
    this.qp = qp;
    this.written = written;
    this.sendQueue = sendQueue;
    this.every = Capabilities.creditEvery(receiveDepth);
    this.source =
        pd.registerMemory(
            ByteBuffer.allocateDirect(SOURCES * Integer.BYTES), AccessFlags.LOCAL_WRITE);
    this.words = source.buffer().order(ByteOrder.BIG_ENDIAN);
    this.write =
        new SendWorkRequest(1).opcode(WrOpcode.RDMA_WRITE).signaled(true).remote(address, rkey);
  }

  /**
   * One receive reposted.
   *
   * @return false when a credit is owed and could not be written now (try again with {@link
   *     #flush})
   */
  boolean reposted() {
    reposted++;
    return reposted - credited < every || flush();
  }

  /**
   * Writes the owed credit when it can now.
   *
   * @return true when none is owed any more
   */
  boolean flush() {
    if (reposted - credited < every) {
      return true;
    }
    if (!sendQueue.tryLock()) {
      return false; // a bind or invalidation waits for its completion: not on this thread's time
    }
    try {
      if (closed) {
        return true;
      }
      if (sendQueue.creditsInFlight() >= MAX_IN_FLIGHT) {
        return false;
      }
      int at = (int) (writes % SOURCES) * Integer.BYTES;
      words.putInt(at, (int) reposted);
      write.wrId(SessionSendQueue.CREDIT | writes).sgl().set(source, at, Integer.BYTES);
      qp.postSend(write);
      sendQueue.creditPosted();
      writes++;
      written.increment();
      credited = reposted;
      return true;
    } catch (VerbsException e) {
      credited = reposted; // the queue pair failed: its receive side ends the session
      return true;
    } finally {
      sendQueue.unlock();
    }
  }

  /** After the queue pair closed: no credit is posted from now on, and the source words go. */
  @Override
  public void close() {
    sendQueue.lock();
    try {
      closed = true;
    } finally {
      sendQueue.unlock();
    }
    source.close();
  }
}
