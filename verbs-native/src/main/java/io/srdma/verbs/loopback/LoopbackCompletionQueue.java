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

  private final LoopbackDeviceContext ctx;
  private final int capacity;

  /** Slot {@code i} holds position {@code p} once {@code seqs[i] == p + 1}. */
  private final long[] seqs;

  private final long[] wrIds;
  private final WcStatus[] statuses;
  private final WcOpcode[] opcodes;
  private final int[] byteLengths;
  private final int[] imms;
  private final boolean[] hasImms;
  private final int[] qpns;
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
    do {
      t = tail;
      if (t - head >= capacity) {
        overrun = true;
        wake();
        return;
      }
    } while (!TAIL.compareAndSet(this, t, t + 1));
    int i = (int) (t % capacity);
    wrIds[i] = wrId;
    statuses[i] = status;
    opcodes[i] = opcode;
    byteLengths[i] = byteLength;
    imms[i] = imm;
    hasImms[i] = hasImm;
    qpns[i] = qpn;
    SEQ.setVolatile(seqs, i, t + 1);
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
    return (int) (tail - head);
  }

  @Override
  public int capacity() {
    return capacity;
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
    if (!overrun && (long) SEQ.getVolatile(seqs, (int) (head % capacity)) != head + 1) {
      return 0;
    }
    synchronized (drainLock) {
      if (overrun) {
        throw new VerbsException(
            VerbsException.Reason.RESOURCE_EXHAUSTED,
            "poll_cq",
            "completion queue of capacity " + capacity + " overran; completions were lost");
      }
      long h = head;
      int n = 0;
      while (n < out.length) {
        int i = (int) (h % capacity);
        if ((long) SEQ.getAcquire(seqs, i) != h + 1) {
          break;
        }
        out[n++].set(
            wrIds[i], statuses[i], opcodes[i], byteLengths[i], hasImms[i], imms[i], qpns[i]);
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
