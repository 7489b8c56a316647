package io.srdma.verbs.soft;

import io.srdma.verbs.BackoffIdleStrategy;
import io.srdma.verbs.CompletionQueue;
import io.srdma.verbs.VerbsException;
import io.srdma.verbs.WcOpcode;
import io.srdma.verbs.WcStatus;
import io.srdma.verbs.WorkCompletion;
import io.srdma.verbs.internal.LiveChildren;
import java.io.IOException;
import java.nio.channels.ClosedSelectorException;
import java.nio.channels.SelectionKey;
import java.nio.channels.Selector;
import java.time.Duration;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.locks.ReentrantLock;

/**
 * A completion queue: a fixed ring of primitive fields, so pushing and polling allocate nothing.
 * Many producers (requester and responder threads), one consumer at a time.
 */
final class SoftCompletionQueue implements CompletionQueue {

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
  private volatile boolean waiting;
  private boolean closed;
  private final Selector selector;
  private final ReentrantLock pollLock = new ReentrantLock();

  /** How {@link #await} waits: spins, then yields, then sleeps in the selector. */
  private final BackoffIdleStrategy idle = new BackoffIdleStrategy();

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
    try {
      selector = Selector.open();
    } catch (IOException e) {
      throw new VerbsException(VerbsException.Reason.IO, "create_cq", "cannot open a selector", e);
    }
  }

  /** Lets pollers of this CQ read the responses of {@code requester} (the QP's send CQ). */
  void attach(Requester requester) {
    try {
      requester.channel().register(selector, SelectionKey.OP_READ, requester);
    } catch (IOException e) {
      throw new VerbsException(
          VerbsException.Reason.IO, "modify_qp(RTS)", "cannot watch the connection", e);
    }
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
    if (waiting) {
      selector.wakeup();
    }
  }

  @Override
  public int capacity() {
    return capacity;
  }

  @Override
  public int poll(WorkCompletion[] out) {
    if (pollLock.tryLock()) {
      try {
        selectNow();
      } finally {
        pollLock.unlock();
      }
    }
    return drain(out);
  }

  @Override
  public int await(WorkCompletion[] out, Duration timeout) {
    long deadline = System.nanoTime() + timeout.toNanos();
    pollLock.lock();
    try {
      idle.reset();
      while (true) {
        selectNow();
        int n = drain(out);
        if (n > 0) {
          return n;
        }
        long left = deadline - System.nanoTime();
        if (left <= 0) {
          return 0;
        }
        if (!idle.shouldBlock()) {
          // Spin, then yield: a completion that is microseconds away needs no wake-up.
          idle.idle();
          continue;
        }
        waiting = true;
        try {
          n = drain(out);
          if (n > 0) {
            return n;
          }
          selector.select(
              SoftCompletionQueue::progress, Math.max(1, TimeUnit.NANOSECONDS.toMillis(left)));
        } catch (IOException | ClosedSelectorException e) {
          throw new VerbsException(
              VerbsException.Reason.IO, "poll_cq", "waiting for completions failed", e);
        } finally {
          waiting = false;
        }
      }
    } finally {
      pollLock.unlock();
    }
  }

  /** A connection has responses: read them (a static method reference allocates nothing). */
  private static void progress(SelectionKey key) {
    ((Requester) key.attachment()).progress();
  }

  /** Handles responses that arrived on attached connections; caller holds the poll lock. */
  private void selectNow() {
    try {
      selector.selectNow(SoftCompletionQueue::progress);
    } catch (IOException | ClosedSelectorException e) {
      throw new VerbsException(
          VerbsException.Reason.IO, "poll_cq", "reading completions failed", e);
    }
  }

  private int drain(WorkCompletion[] out) {
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
  public synchronized void close() {
    if (closed) {
      return;
    }
    users.requireNone("destroy_cq", "completion queue");
    closed = true;
    try {
      selector.close();
    } catch (IOException e) {
      throw new VerbsException(
          VerbsException.Reason.IO, "destroy_cq", "closing the selector failed", e);
    }
    ctx.children().remove(SoftDeviceContext.COMPLETION_QUEUE);
  }

  synchronized boolean isClosed() {
    return closed;
  }
}
