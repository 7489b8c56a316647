package io.srdma.verbs.soft;

import io.srdma.verbs.ReceiveWorkRequest;
import io.srdma.verbs.ScatterGatherList;
import io.srdma.verbs.VerbsException;
import io.srdma.verbs.WcOpcode;
import io.srdma.verbs.WcStatus;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.locks.Condition;
import java.util.concurrent.locks.ReentrantLock;

/**
 * Posted receives, consumed in order by incoming SEND and WRITE_WITH_IMM. Three kinds:
 *
 * <ul>
 *   <li>{@link #own}: a QP's own receive queue;
 *   <li>{@link #sharedRing}: the receives of a shared receive queue, belonging to no QP (no CQ);
 *   <li>{@link #claiming}: the view a QP with an SRQ gives its responder: {@link #awaitHead} takes
 *       the oldest receive out of the SRQ into this QP's single slot, where {@link #complete}
 *       reports it on the QP's CQ with the QP's number, and {@link #flush} flushes only it.
 * </ul>
 *
 * Lock order: a shared ring's lock before a claiming queue's lock, never the reverse.
 */
final class ReceiveQueue {
  private static final long WAIT_SLICE_NANOS = TimeUnit.MILLISECONDS.toNanos(100);

  private final SoftCompletionQueue cq;
  private final int qpn;
  private final ReceiveQueue shared;
  private final int capacity;
  private final long[] wrIds;
  private final int maxSge;
  // Slot i's SGEs at [i * maxSge, i * maxSge + sges[i]): flat, one array each, not one per slot.
  private final long[] addresses;
  private final int[] lengths;
  private final int[] lkeys;
  private final int[] sges;
  private final ReentrantLock lock = new ReentrantLock();
  private final Condition posted = lock.newCondition();
  // run once each after the next post (any thread adds; post drains): parked responders' wake-ups
  private final ConcurrentLinkedQueue<Runnable> onPost = new ConcurrentLinkedQueue<>();
  private long head;
  private long tail;
  private volatile boolean flushed;
  private boolean closed;

  private ReceiveQueue(
      SoftCompletionQueue cq, int qpn, ReceiveQueue shared, int capacity, int maxSge) {
    this.cq = cq;
    this.qpn = qpn;
    this.shared = shared;
    this.capacity = Math.max(1, capacity);
    wrIds = new long[this.capacity];
    this.maxSge = maxSge;
    addresses = new long[this.capacity * maxSge];
    lengths = new int[this.capacity * maxSge];
    lkeys = new int[this.capacity * maxSge];
    sges = new int[this.capacity];
  }

  /** The receive queue of QP {@code qpn}, completing on {@code cq}. */
  static ReceiveQueue own(SoftCompletionQueue cq, int qpn, int capacity, int maxSge) {
    return new ReceiveQueue(cq, qpn, null, capacity, maxSge);
  }

  /** The receives of a shared receive queue. */
  static ReceiveQueue sharedRing(int capacity, int maxSge) {
    return new ReceiveQueue(null, 0, null, capacity, maxSge);
  }

  /** QP {@code qpn}'s view of the shared {@code ring}, completing on {@code cq}. */
  static ReceiveQueue claiming(ReceiveQueue ring, SoftCompletionQueue cq, int qpn) {
    return new ReceiveQueue(cq, qpn, ring, 1, ring.maxSge);
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
          sgl.count() + " SGEs, the queue allows " + maxSge);
    }
    lock.lock();
    try {
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
        addresses[i * maxSge + k] = sgl.address(k);
        lengths[i * maxSge + k] = sgl.length(k);
        lkeys[i * maxSge + k] = sgl.lkey(k);
      }
      tail++;
      posted.signal();
    } finally {
      lock.unlock();
    }
    Runnable wake;
    while ((wake = onPost.poll()) != null) {
      wake.run();
    }
  }

  /**
   * Runs {@code wake} once, on the thread that next posts a receive to this queue (claiming: to the
   * shared ring it takes from), after the post. How a responder parked for a receive (RNR) learns
   * that one is there at once, as an RNIC's responder does, instead of at its next timed look. The
   * caller looks again after registering: a post just before it is not missed. Any thread.
   */
  void wakeOnPost(Runnable wake) {
    (shared != null ? shared : this).onPost.add(wake);
  }

  /** Wake-ups registered here and not run yet (tests). */
  int wakeUpsWaiting() {
    return onPost.size();
  }

  /** Forgets {@code wake} (a terminated responder's), not run yet. Any thread. */
  void cancelWakeOnPost(Runnable wake) {
    (shared != null ? shared : this).onPost.remove(wake);
  }

  /**
   * Waits until a receive is posted (or, claiming, taken from the shared ring) or {@code
   * deadlineNanos} passes.
   *
   * @return the slot of the oldest receive, or -1 (receiver not ready, or flushed)
   */
  int awaitHead(long deadlineNanos) throws InterruptedException {
    if (shared != null) {
      lock.lock();
      try {
        if (head != tail) {
          return (int) (head % capacity);
        }
        if (flushed) {
          return -1;
        }
      } finally {
        lock.unlock();
      }
      return shared.claimInto(this, deadlineNanos) ? 0 : -1;
    }
    lock.lock();
    try {
      while (head == tail && !flushed) {
        long left = deadlineNanos - System.nanoTime();
        if (left <= 0) {
          return -1;
        }
        posted.awaitNanos(Math.min(left, WAIT_SLICE_NANOS));
      }
      return flushed ? -1 : (int) (head % capacity);
    } finally {
      lock.unlock();
    }
  }

  /**
   * On a shared ring: waits for a receive and moves the oldest into the empty claiming queue {@code
   * into}; false when the deadline passed, the ring closed or {@code into} was flushed first.
   */
  private boolean claimInto(ReceiveQueue into, long deadlineNanos) throws InterruptedException {
    lock.lock();
    try {
      while (head == tail) {
        long left = deadlineNanos - System.nanoTime();
        if (left <= 0 || closed || into.flushed) {
          return false;
        }
        posted.awaitNanos(Math.min(left, WAIT_SLICE_NANOS));
      }
      int i = (int) (head % capacity);
      if (!into.accept(wrIds[i], sges[i], i * maxSge)) {
        return false;
      }
      head++;
      if (head != tail) {
        posted.signal(); // one post signalled one waiter; pass the rest on
      }
      return true;
    } finally {
      lock.unlock();
    }
  }

  /**
   * On a claiming queue, under the ring's lock: takes one receive (its SGEs at {@code from} of the
   * ring's arrays) unless flushed.
   */
  private boolean accept(long wrId, int count, int from) {
    lock.lock();
    try {
      if (flushed || head != tail) {
        return false;
      }
      wrIds[0] = wrId;
      sges[0] = count;
      System.arraycopy(shared.addresses, from, addresses, 0, count);
      System.arraycopy(shared.lengths, from, lengths, 0, count);
      System.arraycopy(shared.lkeys, from, lkeys, 0, count);
      tail++;
      return true;
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
    return addresses[i * maxSge + k];
  }

  int length(int i, int k) {
    return lengths[i * maxSge + k];
  }

  int lkey(int i, int k) {
    return lkeys[i * maxSge + k];
  }

  /**
   * Removes the oldest receive and reports its completion without waking the CQ's poller: the
   * responder (the only caller) calls {@link #wakePoller} once after a run of them.
   */
  void complete(WcStatus status, WcOpcode opcode, int byteLength, boolean hasImm, int imm) {
    lock.lock();
    try {
      if (head == tail) {
        return;
      }
      int i = (int) (head % capacity);
      head++;
      cq.pushQuietly(wrIds[i], status, opcode, byteLength, hasImm, imm, qpn);
    } finally {
      lock.unlock();
    }
  }

  /** Wakes a poller sleeping on this queue's CQ for what {@link #complete} reported. */
  void wakePoller() {
    cq.wakePoller();
  }

  /**
   * Completes every receive of this QP's queue with WR_FLUSH_ERR (claiming: the one taken from the
   * shared ring, if any; the ring's own stay); later posts are flushed at once.
   */
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
    if (shared != null) {
      shared.wakeAll(); // a responder waiting in claimInto for this QP returns now
    }
  }

  private void wakeAll() {
    lock.lock();
    try {
      posted.signalAll();
    } finally {
      lock.unlock();
    }
  }

  /** On a shared ring: refuses later posts and discards what is left. */
  void close() {
    lock.lock();
    try {
      closed = true;
      head = tail;
      posted.signalAll();
    } finally {
      lock.unlock();
    }
  }
}
