package io.srdma.verbs.loopback;

import io.srdma.verbs.ScatterGatherList;
import io.srdma.verbs.SendWorkRequest;
import io.srdma.verbs.WcStatus;
import io.srdma.verbs.WrOpcode;

/**
 * Send work requests of one QP that wait for the peer (receiver not ready, peer not in RTR yet) and
 * the ones posted behind them, in posting order: RC executes in order. Copies are kept in reusable
 * request objects, made the first time the queue is used. Guarded by the QP's send lock.
 */
final class PendingSends {
  private final int capacity;
  private final int maxSge;
  private SendWorkRequest[] ring;
  private long head;
  private long tail;

  /** When the head request gives up, and the status it then completes with. */
  private long deadlineNanos;

  private WcStatus timeoutStatus;

  PendingSends(int capacity, int maxSge) {
    this.capacity = capacity;
    this.maxSge = maxSge;
  }

  int size() {
    return (int) (tail - head);
  }

  boolean isEmpty() {
    return head == tail;
  }

  /** Appends a copy of {@code wr}; the caller checked the room. */
  void add(SendWorkRequest wr) {
    if (ring == null) {
      ring = new SendWorkRequest[capacity];
    }
    int i = (int) (tail % capacity);
    SendWorkRequest copy = ring[i];
    if (copy == null) {
      copy = new SendWorkRequest(maxSge);
      ring[i] = copy;
    }
    copy.wrId(wr.wrId()).flags(wr.flags()).remote(wr.remoteAddress(), wr.rkey());
    copy.immData(wr.immData());
    ScatterGatherList from = wr.sgl();
    ScatterGatherList to = copy.sgl().clear();
    for (int k = 0; k < from.count(); k++) {
      to.add(from.address(k), from.length(k), from.lkey(k));
    }
    WrOpcode op = wr.opcode();
    if (op == WrOpcode.BIND_MW) {
      copy.bind(wr.window(), wr.bindRegion(), wr.bindAddress(), wr.bindLength(), wr.bindAccess());
    } else if (op == WrOpcode.LOCAL_INV) {
      copy.localInvalidate(wr.invalidateRkey());
    } else {
      copy.opcode(op);
    }
    tail++;
  }

  /** The oldest request. */
  SendWorkRequest head() {
    return ring[(int) (head % capacity)];
  }

  /** Drops the oldest request (and its references to windows and regions). */
  void pop() {
    SendWorkRequest wr = ring[(int) (head % capacity)];
    wr.bind(null, null, 0, 0, 0);
    head++;
    deadlineNanos = 0;
    timeoutStatus = null;
  }

  /** The head waits; sets its deadline unless it already waits for the same reason. */
  void stall(long deadline, WcStatus status) {
    if (timeoutStatus != status) {
      deadlineNanos = deadline;
      timeoutStatus = status;
    }
  }

  /** True when the head's wait is over. */
  boolean expired(long nowNanos) {
    return timeoutStatus != null && nowNanos - deadlineNanos >= 0;
  }

  WcStatus timeoutStatus() {
    return timeoutStatus;
  }
}
