package io.srdma.verbs.soft;

import io.srdma.verbs.ReceiveWorkRequest;
import io.srdma.verbs.ScatterGatherList;
import io.srdma.verbs.VerbsException;
import io.srdma.verbs.WcOpcode;
import io.srdma.verbs.WcStatus;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.locks.Condition;
import java.util.concurrent.locks.ReentrantLock;

/** Posted receives of one QP, consumed in order by incoming SEND and WRITE_WITH_IMM. */
final class ReceiveQueue {
  private final SoftCompletionQueue cq;
  private final int qpn;
  private final int capacity;
  private final long[] wrIds;
  private final long[][] addresses;
  private final int[][] lengths;
  private final int[][] lkeys;
  private final int[] sges;
  private final ReentrantLock lock = new ReentrantLock();
  private final Condition posted = lock.newCondition();
  private long head;
  private long tail;
  private boolean flushed;

  ReceiveQueue(SoftCompletionQueue cq, int qpn, int capacity, int maxSge) {
    this.cq = cq;
    this.qpn = qpn;
    this.capacity = Math.max(1, capacity);
    wrIds = new long[this.capacity];
    addresses = new long[this.capacity][maxSge];
    lengths = new int[this.capacity][maxSge];
    lkeys = new int[this.capacity][maxSge];
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
    lock.lock();
    try {
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
      posted.signal();
    } finally {
      lock.unlock();
    }
  }

  /**
   * Waits until a receive is posted or {@code deadlineNanos} passes.
   *
   * @return the slot of the oldest receive, or -1 (receiver not ready)
   */
  int awaitHead(long deadlineNanos) throws InterruptedException {
    lock.lock();
    try {
      while (head == tail && !flushed) {
        long left = deadlineNanos - System.nanoTime();
        if (left <= 0) {
          return -1;
        }
        posted.awaitNanos(Math.min(left, TimeUnit.MILLISECONDS.toNanos(100)));
      }
      return flushed ? -1 : (int) (head % capacity);
    } finally {
      lock.unlock();
    }
  }

  long wrId(int i) {
    return wrIds[i];
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

  /** Removes the oldest receive and reports its completion. */
  void complete(WcStatus status, WcOpcode opcode, int byteLength, boolean hasImm, int imm) {
    lock.lock();
    try {
      if (head == tail) {
        return;
      }
      int i = (int) (head % capacity);
      head++;
      cq.push(wrIds[i], status, opcode, byteLength, hasImm, imm, qpn);
    } finally {
      lock.unlock();
    }
  }

  /** Completes every posted receive with WR_FLUSH_ERR; later posts are flushed at once. */
  void flush() {
    lock.lock();
    try {
      flushed = true;
      while (head < tail) {
        int i = (int) (head % capacity);
        head++;
        cq.push(wrIds[i], WcStatus.WR_FLUSH_ERR, WcOpcode.RECV, 0, false, 0, qpn);
      }
      posted.signalAll();
    } finally {
      lock.unlock();
    }
  }
}
