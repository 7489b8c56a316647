package io.srdma.verbs.loopback;

import io.srdma.verbs.ReceiveWorkRequest;
import io.srdma.verbs.ScatterGatherList;
import io.srdma.verbs.VerbsException;
import io.srdma.verbs.WcOpcode;
import io.srdma.verbs.WcStatus;

/**
 * Posted receives of one QP, consumed in order by incoming SEND and WRITE_WITH_IMM (executed by the
 * peer's posting thread). Positions make a consumer's completion safe against a concurrent flush: a
 * receive is completed only if it is still the oldest one. Thread-safe; allocates nothing.
 */
final class LoopbackReceiveQueue {
  private final LoopbackCompletionQueue cq;
  private final int qpn;
  private final int capacity;
  private final long[] wrIds;
  private final long[][] addresses;
  private final int[][] lengths;
  private final int[][] lkeys;
  private final int[] sges;
  private long head;
  private long tail;
  private boolean flushed;

  LoopbackReceiveQueue(LoopbackCompletionQueue cq, int qpn, int capacity, int maxSge) {
    this.cq = cq;
    this.qpn = qpn;
    this.capacity = Math.max(1, capacity);
    int sgeSlots = Math.max(1, maxSge);
    wrIds = new long[this.capacity];
    addresses = new long[this.capacity][sgeSlots];
    lengths = new int[this.capacity][sgeSlots];
    lkeys = new int[this.capacity][sgeSlots];
    sges = new int[this.capacity];
  }

  /** Posts a receive, or completes it with WR_FLUSH_ERR at once when the QP is in ERROR. */
  void post(ReceiveWorkRequest wr, int maxSge, boolean inError) {
    ScatterGatherList sgl = wr.sgl();
    if (sgl.count() > maxSge) {
      throw new VerbsException(
          VerbsException.Reason.INVALID_ARGUMENT,
          "post_recv",
          sgl.count() + " SGEs, QP allows " + maxSge);
    }
    synchronized (this) {
      if (tail - head == capacity) {
        throw new VerbsException(
            VerbsException.Reason.RESOURCE_EXHAUSTED,
            "post_recv",
            "receive queue full (" + capacity + ")");
      }
      if (inError || flushed) {
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

  /** The position of the oldest receive, or -1 when none is posted (receiver not ready). */
  synchronized long head() {
    return head == tail || flushed ? -1 : head;
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

  /** Completes every posted receive with WR_FLUSH_ERR; later posts are flushed at once. */
  synchronized void flush() {
    flushed = true;
    while (head < tail) {
      int i = (int) (head % capacity);
      head++;
      cq.push(wrIds[i], WcStatus.WR_FLUSH_ERR, WcOpcode.RECV, 0, false, 0, qpn);
    }
  }
}
