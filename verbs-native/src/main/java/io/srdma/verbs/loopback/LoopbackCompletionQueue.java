package io.srdma.verbs.loopback;

import io.srdma.verbs.CompletionQueue;
import io.srdma.verbs.VerbsException;
import io.srdma.verbs.WcOpcode;
import io.srdma.verbs.WcStatus;
import io.srdma.verbs.WorkCompletion;
import io.srdma.verbs.internal.LiveChildren;
import java.lang.invoke.MethodHandles;
import java.lang.invoke.VarHandle;
import java.time.Duration;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.locks.LockSupport;
import java.util.concurrent.locks.ReentrantLock;

/**
 * A completion queue of the loopback provider: a preallocated ring of primitive fields, filled by
 * many producers (the threads that post to the queue pairs using it, and their peers' threads)
 * without locks, drained by one consumer at a time. Pushing and polling allocate nothing. {@link
 * #await} spins briefly, yields, then parks for bounded intervals; a producer unparks a parked
 * waiter.
 *
 * <p>Queue pairs whose send queue waits for the peer (receiver not ready, peer not yet in RTR)
 * register here, and every poll and await checks their deadlines: that is where RNR_RETRY_EXC_ERR
 * and RETRY_EXC_ERR of the loopback provider come from (it has no threads of its own).
 *
 * <p>Thread-safe.
 */
final class LoopbackCompletionQueue implements CompletionQueue {
  private static final VarHandle SEQ = MethodHandles.arrayElementVarHandle(long[].class);
  private static final VarHandle TAIL;

  /** How long await spins (then yields) before it parks. */
  private static final long SPIN_NANOS = TimeUnit.MICROSECONDS.toNanos(20);

  /** Busy-spin iterations before await starts yielding instead. */
  private static final int SPIN_TRIES = 100;

  /** Longest single park while nothing is stalled (a push unparks earlier). */
  private static final long PARK_NANOS = TimeUnit.MILLISECONDS.toNanos(50);

  /** Longest single park while a queue pair waits for a deadline. */
  private static final long STALL_PARK_NANOS = TimeUnit.MILLISECONDS.toNanos(1);

  private static final LoopbackQueuePair[] NONE = new LoopbackQueuePair[0];

  static {
    try {
      TAIL =
          MethodHandles.lookup().findVarHandle(LoopbackCompletionQueue.class, "tail", long.class);
    } catch (ReflectiveOperationException e) {
      throw new ExceptionInInitializerError(e);
    }
  }

  /** Set in {@code tail} while {@link #resize} replaces the ring: producers wait. */
  private static final long FROZEN = 1L << 62;

  private final LoopbackDeviceContext ctx;

  /** Replaced by {@link #resize} while {@code tail} is frozen and the drain lock held. */
  private volatile Ring ring;

  private final LiveChildren users = new LiveChildren();
  private final ReentrantLock awaitLock = new ReentrantLock();
  private final Object drainLock = new Object();

  @SuppressWarnings("unused") // through TAIL
  private volatile long tail;

  private volatile long head;
  private volatile boolean overrun;
  private volatile Thread waiter;
  private volatile LoopbackQueuePair[] stalled = NONE;
  private boolean closed;

  LoopbackCompletionQueue(LoopbackDeviceContext ctx, int capacity) {
    this.ctx = ctx;
    this.ring = new Ring(capacity);
  }

  /**
   * The slots, one array per field; slot {@code i} holds position {@code p} once seqs[i] == p+1.
   */
  private static final class Ring {
    final int capacity;
    final long[] seqs;
    final long[] wrIds;
    final WcStatus[] statuses;
    final WcOpcode[] opcodes;
    final int[] byteLengths;
    final int[] imms;
    final boolean[] hasImms;
    final int[] qpns;

    Ring(int capacity) {
      this.capacity = capacity;
      seqs = new long[capacity];
      wrIds = new long[capacity];
      statuses = new WcStatus[capacity];
      opcodes = new WcOpcode[capacity];
      byteLengths = new int[capacity];
      imms = new int[capacity];
      hasImms = new boolean[capacity];
      qpns = new int[capacity];
    }

    /** Copies position {@code p} of {@code from} (published there) to this ring, published. */
    void copy(Ring from, long p) {
      int f = (int) (p % from.capacity);
      int t = (int) (p % capacity);
      wrIds[t] = from.wrIds[f];
      statuses[t] = from.statuses[f];
      opcodes[t] = from.opcodes[f];
      byteLengths[t] = from.byteLengths[f];
      imms[t] = from.imms[f];
      hasImms[t] = from.hasImms[f];
      qpns[t] = from.qpns[f];
      seqs[t] = p + 1;
    }
  }

  LoopbackDeviceContext loopbackContext() {
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
    long t;
    while (true) {
      t = tail;
      if ((t & FROZEN) != 0) {
        Thread.onSpinWait(); // a resize copies the ring: microseconds
      } else if (t - head >= ring.capacity) {
        overrun = true;
        wake();
        return;
      } else if (TAIL.compareAndSet(this, t, t + 1)) {
        break;
      }
    }
    // the ring of the claim: a resize waits for this slot before it replaces the ring
    Ring r = ring;
    if (t - head >= r.capacity) {
      // a shrink ran between the check and the claim (tail came back to t): full at the new size
      overrun = true;
      wake();
      return;
    }
    int i = (int) (t % r.capacity);
    r.wrIds[i] = wrId;
    r.statuses[i] = status;
    r.opcodes[i] = opcode;
    r.byteLengths[i] = byteLength;
    r.imms[i] = imm;
    r.hasImms[i] = hasImm;
    r.qpns[i] = qpn;
    SEQ.setVolatile(r.seqs, i, t + 1);
    wake();
  }

  private void wake() {
    Thread w = waiter;
    if (w != null) {
      LockSupport.unpark(w);
    }
  }

  /** {@code qp} waits for its peer: check its deadlines on every poll. */
  synchronized void addStalled(LoopbackQueuePair qp) {
    LoopbackQueuePair[] s = stalled;
    for (LoopbackQueuePair q : s) {
      if (q == qp) {
        return;
      }
    }
    LoopbackQueuePair[] bigger = java.util.Arrays.copyOf(s, s.length + 1);
    bigger[s.length] = qp;
    stalled = bigger;
    wake();
  }

  synchronized void removeStalled(LoopbackQueuePair qp) {
    LoopbackQueuePair[] s = stalled;
    for (int i = 0; i < s.length; i++) {
      if (s[i] == qp) {
        LoopbackQueuePair[] smaller = new LoopbackQueuePair[s.length - 1];
        System.arraycopy(s, 0, smaller, 0, i);
        System.arraycopy(s, i + 1, smaller, i, s.length - i - 1);
        stalled = smaller.length == 0 ? NONE : smaller;
        return;
      }
    }
  }

  private void checkStalled() {
    LoopbackQueuePair[] s = stalled;
    for (LoopbackQueuePair qp : s) {
      qp.kick();
    }
  }

  /** Completions pushed and not yet polled (claimed slots included). */
  int pending() {
    return (int) ((tail & ~FROZEN) - head);
  }

  @Override
  public int capacity() {
    return ring.capacity;
  }

  /**
   * Freezes {@code tail} (producers spin), waits for the slots already claimed to be filled, copies
   * the queued completions to a new ring at the same positions (so in order) and unfreezes.
   */
  @Override
  public void resize(int newCapacity) {
    synchronized (drainLock) {
      synchronized (this) {
        if (closed) {
          throw new VerbsException(
              VerbsException.Reason.CLOSED, "resize_cq", "completion queue is closed");
        }
      }
      long t;
      do {
        t = tail;
      } while (!TAIL.compareAndSet(this, t, t | FROZEN));
      try {
        long h = head;
        int queued = (int) (t - h);
        if (newCapacity < 1
            || newCapacity > LoopbackDeviceContext.MAX_CQE
            || newCapacity < queued) {
          throw new VerbsException(
              VerbsException.Reason.INVALID_ARGUMENT,
              "resize_cq",
              "capacity "
                  + newCapacity
                  + " outside "
                  + Math.max(1, queued)
                  + ".."
                  + LoopbackDeviceContext.MAX_CQE
                  + " ("
                  + queued
                  + " completion(s) queued)");
        }
        Ring old = ring;
        Ring bigger = new Ring(newCapacity);
        for (long p = h; p < t; p++) {
          int i = (int) (p % old.capacity);
          while ((long) SEQ.getAcquire(old.seqs, i) != p + 1) {
            Thread.onSpinWait(); // claimed, still being filled
          }
          bigger.copy(old, p);
        }
        ring = bigger;
      } finally {
        tail = t; // unfreezes; publishes the new ring to the producers that read tail
      }
    }
  }

  @Override
  public int poll(WorkCompletion[] out) {
    if (stalled.length != 0) {
      checkStalled();
    }
    return drain(out);
  }

  @Override
  public int await(WorkCompletion[] out, Duration timeout) {
    long start = System.nanoTime();
    long deadline = start + timeout.toNanos();
    try {
      if (!awaitLock.tryLock(Math.max(0, timeout.toNanos()), TimeUnit.NANOSECONDS)) {
        return 0;
      }
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      return 0;
    }
    try {
      long spinUntil = start + SPIN_NANOS;
      int spins = 0;
      while (true) {
        int n = poll(out);
        if (n > 0) {
          return n;
        }
        long now = System.nanoTime();
        long left = deadline - now;
        if (left <= 0) {
          return 0;
        }
        if (now - spinUntil < 0) {
          // busy-spin a little, then yield: on a machine with fewer free cores than runnable
          // threads the producer may be waiting for this very core
          if (++spins <= SPIN_TRIES) {
            Thread.onSpinWait();
          } else {
            Thread.yield();
          }
          continue;
        }
        waiter = Thread.currentThread();
        try {
          n = drain(out);
          if (n > 0) {
            return n;
          }
          long max = stalled.length == 0 ? PARK_NANOS : STALL_PARK_NANOS;
          LockSupport.parkNanos(this, Math.min(left, max));
          if (Thread.currentThread().isInterrupted()) {
            return drain(out);
          }
        } finally {
          waiter = null;
        }
      }
    } finally {
      awaitLock.unlock();
    }
  }

  private int drain(WorkCompletion[] out) {
    Ring seen = ring;
    if (!overrun && (long) SEQ.getVolatile(seen.seqs, (int) (head % seen.capacity)) != head + 1) {
      return 0;
    }
    synchronized (drainLock) {
      Ring r = ring;
      if (overrun) {
        throw new VerbsException(
            VerbsException.Reason.RESOURCE_EXHAUSTED,
            "poll_cq",
            "completion queue of capacity " + r.capacity + " overran; completions were lost");
      }
      long h = head;
      int n = 0;
      while (n < out.length) {
        int i = (int) (h % r.capacity);
        if ((long) SEQ.getAcquire(r.seqs, i) != h + 1) {
          break;
        }
        out[n++].set(
            r.wrIds[i],
            r.statuses[i],
            r.opcodes[i],
            r.byteLengths[i],
            r.hasImms[i],
            r.imms[i],
            r.qpns[i]);
        h++;
      }
      head = h;
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
    ctx.children().remove(LoopbackDeviceContext.COMPLETION_QUEUE);
  }

  synchronized boolean isClosed() {
    return closed;
  }
}
