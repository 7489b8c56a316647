package io.srdma.verbs.soft;

import io.srdma.verbs.WcOpcode;
import io.srdma.verbs.WcStatus;

/**
 * The send queue of one QP: a ring of slots in posting order. Remote requests stay pending until
 * acknowledged (acknowledgements are cumulative by PSN, as on RC); local ones (bind, invalidate)
 * are done when posted. Completions leave strictly in posting order. Primitive arrays: no
 * allocation.
 */
final class SendQueue {

  private final SoftCompletionQueue cq;
  private final int qpn;
  private final int capacity;
  private final long[] wrIds;
  private final WcOpcode[] opcodes;
  private final boolean[] signaled;
  private final boolean[] remote;

  /** Null while pending. */
  private final WcStatus[] status;

  private final int[] psns;
  private final int[] byteLengths;
  private final int maxSge;

  // Where RDMA READ data lands: slot i's SGEs at [i * maxSge, (i + 1) * maxSge), allocated at the
  // first READ (a QP that only writes, or only answers, keeps none).
  private SoftMemoryRegion[] readRegions;
  private long[] readOffsets;
  private int[] readLengths;
  private final int[] readSges;
  private long head;
  private long tail;
  private int pendingRemote;

  SendQueue(SoftCompletionQueue cq, int qpn, int capacity, int maxSge) {
    this.cq = cq;
    this.qpn = qpn;
    this.capacity = capacity;
    wrIds = new long[capacity];
    opcodes = new WcOpcode[capacity];
    signaled = new boolean[capacity];
    remote = new boolean[capacity];
    status = new WcStatus[capacity];
    psns = new int[capacity];
    byteLengths = new int[capacity];
    this.maxSge = maxSge;
    readSges = new int[capacity];
  }

  synchronized int free() {
    return capacity - (int) (tail - head);
  }

  synchronized boolean hasPendingRemote() {
    return pendingRemote > 0;
  }

  /** Adds a pending remote request; returns its slot index. The caller checked {@link #free()}. */
  synchronized int addRemote(
      long wrId, WcOpcode opcode, boolean isSignaled, int psn, int byteLength) {
    int i = slot(tail++);
    wrIds[i] = wrId;
    opcodes[i] = opcode;
    signaled[i] = isSignaled;
    remote[i] = true;
    status[i] = null;
    psns[i] = psn;
    byteLengths[i] = byteLength;
    readSges[i] = 0;
    pendingRemote++;
    return i;
  }

  /** Records where the bytes of an RDMA READ in slot {@code i} land. */
  synchronized void addReadTarget(int i, SoftMemoryRegion mr, long offset, int length) {
    if (readRegions == null) {
      readRegions = new SoftMemoryRegion[capacity * maxSge];
      readOffsets = new long[capacity * maxSge];
      readLengths = new int[capacity * maxSge];
    }
    int n = i * maxSge + readSges[i]++;
    readRegions[n] = mr;
    readOffsets[n] = offset;
    readLengths[n] = length;
  }

  int readSges(int i) {
    return readSges[i];
  }

  SoftMemoryRegion readRegion(int i, int sge) {
    return readRegions[i * maxSge + sge];
  }

  long readOffset(int i, int sge) {
    return readOffsets[i * maxSge + sge];
  }

  int readLength(int i, int sge) {
    return readLengths[i * maxSge + sge];
  }

  int byteLength(int i) {
    return byteLengths[i];
  }

  /** Adds a request that is already done (local operation, or refused before it was sent). */
  synchronized void addDone(long wrId, WcOpcode opcode, boolean isSignaled, WcStatus result) {
    int i = slot(tail++);
    wrIds[i] = wrId;
    opcodes[i] = opcode;
    signaled[i] = isSignaled;
    remote[i] = false;
    status[i] = result;
    byteLengths[i] = 0;
    retire();
  }

  /**
   * The slot of the pending remote request with {@code psn} if a response may name it, else -1.
   * Responses come in request order and only its READ RESPONSE completes an RDMA READ, so a
   * response may name no request beyond a READ still waiting for its data: it would complete that
   * READ with no data placed (IB treats it as lost and retries; over TCP nothing is lost, so it is
   * a protocol error).
   */
  synchronized int answerableSlot(int psn) {
    for (long s = head; s < tail; s++) {
      int i = slot(s);
      if (status[i] == null && remote[i]) {
        if (psns[i] == psn) {
          return i;
        }
        if (opcodes[i] == WcOpcode.RDMA_READ) {
          return -1;
        }
      }
    }
    return -1;
  }

  boolean isRead(int i) {
    return opcodes[i] == WcOpcode.RDMA_READ;
  }

  /**
   * Completes every pending remote request up to and including the one with {@code psn}
   * successfully (cumulative acknowledgement). The caller checked with {@link #answerableSlot} that
   * no RDMA READ before it waits for its data; {@code psn} may be that of a READ only once its data
   * was placed.
   */
  synchronized void ackThrough(int psn) {
    for (long s = head; s < tail; s++) {
      int i = slot(s);
      if (status[i] == null && remote[i]) {
        status[i] = WcStatus.SUCCESS;
        pendingRemote--;
        if (psns[i] == psn) {
          break;
        }
      }
    }
    retire();
  }

  /**
   * Fails the request with {@code psn} with {@code result}; earlier pending ones succeeded (RC
   * executes in order; the caller checked with {@link #answerableSlot} that none is a READ waiting
   * for its data), later ones are flushed.
   */
  synchronized void failAt(int psn, WcStatus result) {
    boolean found = false;
    for (long s = head; s < tail; s++) {
      int i = slot(s);
      if (status[i] != null || !remote[i]) {
        continue;
      }
      pendingRemote--;
      if (found) {
        status[i] = WcStatus.WR_FLUSH_ERR;
      } else if (psns[i] == psn) {
        status[i] = result;
        found = true;
      } else {
        status[i] = WcStatus.SUCCESS;
      }
    }
    retire();
  }

  /** Completes the first pending request with {@code first} and flushes the rest. */
  synchronized void failAll(WcStatus first) {
    WcStatus next = first;
    for (long s = head; s < tail; s++) {
      int i = slot(s);
      if (status[i] == null) {
        status[i] = next;
        next = WcStatus.WR_FLUSH_ERR;
        pendingRemote--;
      }
    }
    retire();
  }

  private void retire() {
    while (head < tail) {
      int i = slot(head);
      WcStatus s = status[i];
      if (s == null) {
        return;
      }
      if (s != WcStatus.SUCCESS || signaled[i]) {
        cq.push(
            wrIds[i],
            s,
            opcodes[i],
            opcodes[i] == WcOpcode.RDMA_READ ? byteLengths[i] : 0,
            false,
            0,
            qpn);
      }
      for (int k = 0; k < readSges[i]; k++) {
        readRegions[i * maxSge + k] = null;
      }
      head++;
    }
  }

  private int slot(long seq) {
    return (int) (seq % capacity);
  }
}
