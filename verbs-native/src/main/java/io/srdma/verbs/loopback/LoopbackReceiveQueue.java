package io.srdma.verbs.loopback;

import io.srdma.verbs.ReceiveWorkRequest;
import io.srdma.verbs.ScatterGatherList;
import io.srdma.verbs.VerbsException;
import io.srdma.verbs.WcOpcode;
import io.srdma.verbs.WcStatus;

/**
 * Posted receives, consumed in order by incoming SEND and WRITE_WITH_IMM (executed by the peer's
 * posting thread). Three kinds, as in the soft provider:
 *
 * <ul>
 *   <li>{@link #own}: a QP's own receive queue;
 *   <li>{@link #sharedRing}: the receives of a shared receive queue, belonging to no QP (no CQ);
 *   <li>{@link #claiming}: the view a QP with an SRQ gives its peer's executor: {@link #head} moves
 *       the oldest receive out of the SRQ into this QP's single slot (each receive goes to exactly
 *       one QP), where {@link #complete} reports it on the QP's CQ with the QP's number, and {@link
 *       #flush} flushes only it.
 * </ul>
 *
 * Positions make a consumer's completion safe against a concurrent flush: a receive is completed
 * only if it is still the oldest one. Lock order: a shared ring's monitor before a claiming
 * queue's, never the reverse. Thread-safe; allocates nothing.
 */
final class LoopbackReceiveQueue {
  private final LoopbackCompletionQueue cq;
  private final int qpn;
  private final LoopbackReceiveQueue shared;
  private final int capacity;
  private final long[] wrIds;
  private final long[][] addresses;
  private final int[][] lengths;
  private final int[][] lkeys;
  private final int[] sges;
  private long head;
  private long tail;
  private boolean flushed;
  private boolean closed;

  private LoopbackReceiveQueue(
      LoopbackCompletionQueue cq, int qpn, LoopbackReceiveQueue shared, int capacity, int maxSge) {
    this.cq = cq;
    this.qpn = qpn;
    this.shared = shared;
    this.capacity = Math.max(1, capacity);
    int sgeSlots = Math.max(1, maxSge);
    wrIds = new long[this.capacity];
    addresses = new long[this.capacity][sgeSlots];
    lengths = new int[this.capacity][sgeSlots];
    lkeys = new int[this.capacity][sgeSlots];
    sges = new int[this.capacity];
  }

  /** The receive queue of QP {@code qpn}, completing on {@code cq}. */
  static LoopbackReceiveQueue own(LoopbackCompletionQueue cq, int qpn, int capacity, int maxSge) {
    return new LoopbackReceiveQueue(cq, qpn, null, capacity, maxSge);
  }

  /** The receives of a shared receive queue. */
  static LoopbackReceiveQueue sharedRing(int capacity, int maxSge) {
    return new LoopbackReceiveQueue(null, 0, null, capacity, maxSge);
  }

  /** QP {@code qpn}'s view of the shared {@code ring}, completing on {@code cq}. */
  static LoopbackReceiveQueue claiming(
      LoopbackReceiveQueue ring, LoopbackCompletionQueue cq, int qpn) {
    return new LoopbackReceiveQueue(cq, qpn, ring, 1, ring.lengths[0].length);
  }

  int capacity() {
    return capacity;
  }

  /**
   * Posts a receive. On a QP's queue in ERROR it completes with WR_FLUSH_ERR at once; on a shared
   * ring it is refused once the ring is closed.
   */
  void post(ReceiveWorkRequest wr, int maxSge, boolean inError) {
    String verb = cq == null ? "post_srq_recv" : "post_recv";
    ScatterGatherList sgl = wr.sgl();
    if (sgl.count() > maxSge) {
      throw new VerbsException(
          VerbsException.Reason.INVALID_ARGUMENT,
          verb,
          sgl.count() + " SGEs, " + (cq == null ? "the queue" : "QP") + " allows " + maxSge);
    }
    synchronized (this) {
      if (closed) {
        throw new VerbsException(
            VerbsException.Reason.CLOSED, verb, "shared receive queue is closed");
      }
      if (tail - head == capacity) {
        throw new VerbsException(
            VerbsException.Reason.RESOURCE_EXHAUSTED,
            verb,
            "receive queue full (" + capacity + ")");
      }
      if (cq != null && (inError || flushed)) {
        cq.push(wr.wrId(), WcStatus.WR_FLUSH_ERR, WcOpcode.RECV, 0, false, 0, qpn);
        return;
      }
      int i = (int) (tail % capacity);
      wrIds[i] = wr.wrId();
      sges[i] = sgl.count();
      for (int k = 0; k < sgl.count(); k++) {
        addresses[i][k] = sgl.address(k);
        lengths[i][k] = sgl.length(k);
        lkeys[i][k] = sgl.lkey(k);
      }
      tail++;
    }
  }

  /**
   * The position of the oldest receive, or -1 when none is posted (receiver not ready) or the queue
   * was flushed. Claiming: takes the oldest receive of the shared ring first if this QP holds none.
   */
  long head() {
    synchronized (this) {
      if (flushed) {
        return -1;
      }
      if (head != tail || shared == null) {
        return head == tail ? -1 : head;
      }
    }
    return shared.claimInto(this);
  }

  /**
   * On a shared ring: moves the oldest receive into the empty claiming queue {@code into}.
   *
   * @return its position in {@code into}, or -1 (ring empty or closed, {@code into} flushed)
   */
  private synchronized long claimInto(LoopbackReceiveQueue into) {
    if (head == tail || closed) {
      return -1;
    }
    int i = (int) (head % capacity);
    long position = into.accept(wrIds[i], sges[i], addresses[i], lengths[i], lkeys[i]);
    if (position >= 0) {
      head++;
    }
    return position;
  }

  /** On a claiming queue, under the ring's monitor: takes one receive unless flushed or full. */
  private synchronized long accept(long wrId, int count, long[] address, int[] length, int[] lkey) {
    if (flushed || head != tail) {
      return -1;
    }
    wrIds[0] = wrId;
    sges[0] = count;
    System.arraycopy(address, 0, addresses[0], 0, count);
    System.arraycopy(length, 0, lengths[0], 0, count);
    System.arraycopy(lkey, 0, lkeys[0], 0, count);
    tail++;
    return head;
  }

  int slot(long position) {
    return (int) (position % capacity);
  }

  int sges(int i) {
    return sges[i];
  }

  long address(int i, int k) {
    return addresses[i][k];
  }

  int length(int i, int k) {
    return lengths[i][k];
  }

  int lkey(int i, int k) {
    return lkeys[i][k];
  }

  /** Removes the receive at {@code position} if it is still the oldest and reports it. */
  void complete(
      long position, WcStatus status, WcOpcode opcode, int byteLength, boolean hasImm, int imm) {
    synchronized (this) {
      if (flushed || head != position || head == tail) {
        return;
      }
      long wrId = wrIds[(int) (head % capacity)];
      head++;
      cq.push(wrId, status, opcode, byteLength, hasImm, imm, qpn);
    }
  }

  /**
   * Completes every receive of this QP's queue with WR_FLUSH_ERR (claiming: the one taken from the
   * shared ring, if any; the ring's own stay); later posts are flushed at once.
   */
  synchronized void flush() {
    flushed = true;
    while (head < tail) {
      int i = (int) (head % capacity);
      head++;
      cq.push(wrIds[i], WcStatus.WR_FLUSH_ERR, WcOpcode.RECV, 0, false, 0, qpn);
    }
  }

  /** On a shared ring: refuses later posts and discards what is left. */
  synchronized void close() {
    closed = true;
    head = tail;
  }
}
