package io.srdma.verbs.soft;

import io.srdma.verbs.CompletionQueue;
import io.srdma.verbs.VerbsException;
import io.srdma.verbs.WcOpcode;
import io.srdma.verbs.WcStatus;
import io.srdma.verbs.WorkCompletion;
import java.time.Duration;
import java.util.concurrent.locks.LockSupport;

/**
 * A completion queue: a fixed ring of primitive fields, so pushing and polling allocate nothing.
 * Many producers (requester and responder threads), one consumer at a time.
 */
final class SoftCompletionQueue implements CompletionQueue {
  private static final long SPIN_NANOS = 50_000;

  private final SoftDeviceContext ctx;
  private final int capacity;
  private final long[] wrIds;
  private final WcStatus[] statuses;
  private final WcOpcode[] opcodes;
  private final int[] byteLengths;
  private final int[] imms;
  private final boolean[] hasImms;
  private final int[] qpns;
  private final LiveChildren users = new LiveChildren();
  private long head;
  private long tail;
  private volatile long published;
  private boolean overrun;
  private volatile Thread waiter;
  private boolean closed;

  SoftCompletionQueue(SoftDeviceContext ctx, int capacity) {
    this.ctx = ctx;
    this.capacity = capacity;
    wrIds = new long[capacity];
    statuses = new WcStatus[capacity];
    opcodes = new WcOpcode[capacity];
    byteLengths = new int[capacity];
    imms = new int[capacity];
    hasImms = new boolean[capacity];
    qpns = new int[capacity];
  }

  SoftDeviceContext softContext() {
    return ctx;
  }

  LiveChildren users() {
    return users;
  }

  /** Adds a completion; on overrun the queue is marked broken, as a real CQ would be. */
  void push(
      long wrId,
      WcStatus status,
      WcOpcode opcode,
      int byteLength,
      boolean hasImm,
      int imm,
      int qpn) {
    synchronized (this) {
      if (tail - head == capacity) {
        overrun = true;
        return;
      }
      int i = (int) (tail % capacity);
      wrIds[i] = wrId;
      statuses[i] = status;
      opcodes[i] = opcode;
      byteLengths[i] = byteLength;
      imms[i] = imm;
      hasImms[i] = hasImm;
      qpns[i] = qpn;
      tail++;
      published = tail;
    }
    Thread w = waiter;
    if (w != null) {
      LockSupport.unpark(w);
    }
  }

  @Override
  public int capacity() {
    return capacity;
  }

  @Override
  public int poll(WorkCompletion[] out) {
    if (published == head && !overrun) {
      return 0;
    }
    synchronized (this) {
      if (overrun) {
        throw new VerbsException(
            VerbsException.Reason.RESOURCE_EXHAUSTED,
            "poll_cq",
            "completion queue of capacity " + capacity + " overran; completions were lost");
      }
      int n = 0;
      while (n < out.length && head < tail) {
        int i = (int) (head % capacity);
        out[n++].set(
            wrIds[i], statuses[i], opcodes[i], byteLengths[i], hasImms[i], imms[i], qpns[i]);
        head++;
      }
      return n;
    }
  }

  @Override
  public int await(WorkCompletion[] out, Duration timeout) {
    long deadline = System.nanoTime() + timeout.toNanos();
    long spinUntil = System.nanoTime() + Math.min(SPIN_NANOS, timeout.toNanos());
    int n;
    while ((n = poll(out)) == 0 && System.nanoTime() < spinUntil) {
      Thread.onSpinWait();
    }
    if (n > 0) {
      return n;
    }
    waiter = Thread.currentThread();
    try {
      while ((n = poll(out)) == 0) {
        long left = deadline - System.nanoTime();
        if (left <= 0) {
          return 0;
        }
        LockSupport.parkNanos(this, left);
      }
      return n;
    } finally {
      waiter = null;
    }
  }

  @Override
  public synchronized void close() {
    if (closed) {
      return;
    }
    users.requireNone("destroy_cq", "completion queue");
    closed = true;
    ctx.children().remove(SoftDeviceContext.COMPLETION_QUEUE);
  }

  synchronized boolean isClosed() {
    return closed;
  }
}
