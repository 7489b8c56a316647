package io.srdma.verbs.soft;

import io.srdma.verbs.BackoffIdleStrategy;
import io.srdma.verbs.CompletionProgress;
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
import java.util.concurrent.locks.LockSupport;
import java.util.concurrent.locks.ReentrantLock;

/**
 * A completion queue: a ring of primitive fields, so pushing and polling allocate nothing (only
 * {@link #resize} replaces the ring). Many producers (requester and responder threads), one
 * consumer at a time.
 *
 * <p>Its selector, through which pollers read the responses of the queue pairs that send on it, is
 * opened when the first of them posts a remote request ({@link #attach}): a queue of receives or of
 * local operations only (a host's per-session send queue, which binds and invalidates windows)
 * holds no descriptor. Until then a waiting poller parks and {@link #push} unparks it.
 *
 * <p>Created with {@link CompletionProgress#POLLER} it opens its selector at once and holds a
 * {@link ResponderLoop#hosted hosted responder loop}: the responders of the queue pairs whose
 * receive queue this is move here once their connection is checked, and every {@link #poll} and
 * {@link #await} also reads and places their incoming requests, on the polling thread, under the
 * poll lock (one driver at a time). No thread of the device then sits between a request and its
 * completion.
 */
final class SoftCompletionQueue implements CompletionQueue {

  private final SoftDeviceContext ctx;
  // The ring: replaced by resize under this object's monitor, read only under it.
  private volatile int capacity;
  private long[] wrIds;
  private WcStatus[] statuses;
  private WcOpcode[] opcodes;
  private int[] byteLengths;
  private int[] imms;
  private boolean[] hasImms;
  private int[] qpns;
  private final LiveChildren users = new LiveChildren();
  private long head;
  private long tail;
  private volatile long published;
  private boolean overrun;
  private volatile boolean waiting;
  private volatile Thread waiter; // the poller in await, for a wake-up without a selector
  private boolean closed;
  private volatile Selector selector; // opened by the first attach, under this object's monitor
  private final ReentrantLock pollLock = new ReentrantLock();

  /** The responders its pollers drive ({@link CompletionProgress#POLLER}), else null. */
  private final ResponderLoop hosted;

  /** The thread that last took the poll lock (hosted only): its pokes need no wake-up. */
  private volatile Thread poller;

  /** Polls since the hosted loop's timers were last looked at. */
  private int pollsSinceScan;

  /** Polls between two looks at the hosted loop's timers (a power of two). */
  static final int SCAN_EVERY = 64;

  /** How {@link #await} waits: spins, then yields, then sleeps in the selector. */
  private final BackoffIdleStrategy idle = new BackoffIdleStrategy();

  SoftCompletionQueue(SoftDeviceContext ctx, int capacity) {
    this.ctx = ctx;
    this.hosted = null;
    allocate(capacity);
  }

  /**
   * @throws VerbsException IO when {@code progress} is {@link CompletionProgress#POLLER} and no
   *     selector can be opened (no descriptor left)
   */
  SoftCompletionQueue(SoftDeviceContext ctx, int capacity, CompletionProgress progress) {
    this.ctx = ctx;
    allocate(capacity);
    if (progress == CompletionProgress.POLLER) {
      try {
        selector = Selector.open();
      } catch (IOException e) {
        throw new VerbsException(
            VerbsException.Reason.IO,
            "create_cq",
            "cannot open the completion queue's selector",
            e);
      }
      hosted = ResponderLoop.hosted(this, selector);
    } else {
      hosted = null;
    }
  }

  /** The loop this queue's pollers drive, or null when the device's threads place requests. */
  ResponderLoop hostedLoop() {
    return hosted;
  }

  /** Whether the calling thread holds the poll lock (drives the hosted loop now). */
  boolean pollingHere() {
    return pollLock.isHeldByCurrentThread();
  }

  /** Whether the calling thread is the one that polled last (it will poll again). */
  boolean isPoller() {
    return poller == Thread.currentThread();
  }

  /**
   * Runs {@code action} as the hosted loop's driver if nobody polls right now (or the caller does).
   *
   * @return false if another thread holds the poll lock (it will see what is queued for it)
   */
  boolean runIfIdle(Runnable action) {
    if (pollLock.isHeldByCurrentThread()) {
      action.run();
      return true;
    }
    if (!pollLock.tryLock()) {
      return false;
    }
    try {
      action.run();
      return true;
    } finally {
      pollLock.unlock();
    }
  }

  /** Under the poll lock: what the hosted loop was handed, and its timers now and then. */
  private void serviceHosted(boolean lookAtClock) {
    Thread t = Thread.currentThread();
    if (poller != t) {
      poller = t;
    }
    hosted.serviceQueues();
    if (lookAtClock || (++pollsSinceScan & (SCAN_EVERY - 1)) == 0) {
      hosted.scanIfDue(System.nanoTime());
    }
  }

  /**
   * Lets pollers of this CQ read the responses of {@code requester} (the QP's send CQ); called
   * before the QP's first remote request. Opens the selector the first time.
   *
   * @throws VerbsException IO if no selector can be opened (no descriptor left) or the connection
   *     cannot be watched; nothing changed then
   */
  void attach(Requester requester) {
    Selector s;
    synchronized (this) {
      if (closed) {
        throw new VerbsException(
            VerbsException.Reason.CLOSED, "post_send", "completion queue is closed");
      }
      s = selector;
      if (s == null) {
        try {
          s = Selector.open();
        } catch (IOException e) {
          throw new VerbsException(
              VerbsException.Reason.IO, "post_send", "cannot open the send CQ's selector", e);
        }
        selector = s;
      }
      try {
        requester.channel().register(s, SelectionKey.OP_READ, requester);
      } catch (IOException | ClosedSelectorException e) {
        throw new VerbsException(
            VerbsException.Reason.IO, "post_send", "cannot watch the connection", e);
      }
    }
    wake(); // a poller parked without a selector waits on it from now on
  }

  /** Wakes the poller waiting in {@link #await}: in the selector if there is one, else parked. */
  private void wake() {
    Selector s = selector;
    if (s != null) {
      s.wakeup();
    }
    Thread t = waiter;
    if (t != null) {
      LockSupport.unpark(t);
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
    pushQuietly(wrId, status, opcode, byteLength, hasImm, imm, qpn);
    wakePoller();
  }

  @Override
  public int capacity() {
    return capacity;
  }

  /**
   * A new ring of {@code newCapacity}: the queued completions move over at the same positions (so
   * in order), under the monitor that pushing and draining take.
   */
  @Override
  public synchronized void resize(int newCapacity) {
    if (closed) {
      throw new VerbsException(
          VerbsException.Reason.CLOSED, "resize_cq", "completion queue is closed");
    }
    int queued = (int) (tail - head);
    if (newCapacity < 1 || newCapacity > SoftDeviceContext.MAX_CQE || newCapacity < queued) {
      throw new VerbsException(
          VerbsException.Reason.INVALID_ARGUMENT,
          "resize_cq",
          "capacity "
              + newCapacity
              + " outside "
              + Math.max(1, queued)
              + ".."
              + SoftDeviceContext.MAX_CQE
              + " ("
              + queued
              + " completion(s) queued)");
    }
    long[] oldWrIds = wrIds;
    WcStatus[] oldStatuses = statuses;
    WcOpcode[] oldOpcodes = opcodes;
    int[] oldByteLengths = byteLengths;
    int[] oldImms = imms;
    boolean[] oldHasImms = hasImms;
    int[] oldQpns = qpns;
    int old = capacity;
    allocate(newCapacity);
    for (long p = head; p < tail; p++) {
      int from = (int) (p % old);
      int to = (int) (p % newCapacity);
      wrIds[to] = oldWrIds[from];
      statuses[to] = oldStatuses[from];
      opcodes[to] = oldOpcodes[from];
      byteLengths[to] = oldByteLengths[from];
      imms[to] = oldImms[from];
      hasImms[to] = oldHasImms[from];
      qpns[to] = oldQpns[from];
    }
  }

  private void allocate(int size) {
    wrIds = new long[size];
    statuses = new WcStatus[size];
    opcodes = new WcOpcode[size];
    byteLengths = new int[size];
    imms = new int[size];
    hasImms = new boolean[size];
    qpns = new int[size];
    capacity = size;
  }

  @Override
  public int poll(WorkCompletion[] out) {
    if (pollLock.tryLock()) {
      try {
        selectNow();
        if (hosted != null) {
          serviceHosted(false);
        }
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
        if (hosted != null) {
          serviceHosted(true);
        }
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
        waiter = Thread.currentThread();
        waiting = true;
        try {
          n = drain(out);
          if (n > 0) {
            return n;
          }
          Selector s = selector;
          if (s == null) {
            LockSupport.parkNanos(this, left); // push and attach unpark
          } else {
            if (hosted != null) {
              left = Math.min(left, hosted.nextScanNanos() - System.nanoTime());
            }
            s.select(
                SoftCompletionQueue::progress, Math.max(1, TimeUnit.NANOSECONDS.toMillis(left)));
          }
        } catch (IOException | ClosedSelectorException e) {
          throw new VerbsException(
              VerbsException.Reason.IO, "poll_cq", "waiting for completions failed", e);
        } finally {
          waiting = false;
          waiter = null;
        }
      }
    } finally {
      pollLock.unlock();
    }
  }

  /**
   * A connection has responses to read (a requester's) or requests to place (a hosted responder's);
   * a static method reference allocates nothing.
   */
  private static void progress(SelectionKey key) {
    Object a = key.attachment();
    if (a instanceof Requester r) {
      r.progress();
    } else if (key.isValid()) {
      ((Responder) a).drive();
    }
  }

  /** Handles responses that arrived on attached connections; caller holds the poll lock. */
  private void selectNow() {
    Selector s = selector;
    if (s == null) {
      return; // no queue pair has posted a remote request on this CQ: no responses to read
    }
    try {
      s.selectNow(SoftCompletionQueue::progress);
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
  public void close() {
    Selector s;
    synchronized (this) {
      if (closed) {
        return;
      }
      users.requireNone("destroy_cq", "completion queue");
      closed = true;
      s = selector;
    }
    if (hosted != null) {
      stopHosted(); // outside the monitor: a poller draining takes it while holding the poll lock
    }
    try {
      if (s != null) {
        s.close();
      }
    } catch (IOException e) {
      throw new VerbsException(
          VerbsException.Reason.IO, "destroy_cq", "closing the selector failed", e);
    }
    ctx.children().remove(SoftDeviceContext.COMPLETION_QUEUE);
  }

  /**
   * Drops the responders still on the hosted loop (their queue pairs are gone: closed ones queued
   * their close here). Waits a bounded time for a poller still inside {@link #await}.
   */
  private void stopHosted() {
    Selector s = selector;
    s.wakeup();
    boolean locked = false;
    try {
      locked = pollLock.tryLock(1, TimeUnit.SECONDS);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
    }
    if (!locked) {
      return; // the selector's close below cancels their keys; their channels are closed already
    }
    try {
      hosted.terminateAll();
    } finally {
      pollLock.unlock();
    }
  }

  /** Whether the selector is open: some queue pair posted a remote request on this CQ. */
  boolean hasSelector() {
    return selector != null;
  }

  synchronized boolean isClosed() {
    return closed;
  }

  // ---- a run of completions with one wake-up (a responder's read batch) ----

  /**
   * As {@link #push}, but wakes no poller: a responder pushes the receive completions of one read
   * batch this way and then calls {@link #wakePoller} once, so a sleeping poller is woken once for
   * the run (and drains it whole) instead of once per completion. A spinning poller sees each at
   * once, as with {@link #push}.
   */
  void pushQuietly(
      long wrId,
      WcStatus status,
      WcOpcode opcode,
      int byteLength,
      boolean hasImm,
      int imm,
      int qpn) {
    synchronized (this) {
      if (tail - head >= capacity) {
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
  }

  /**
   * Wakes a poller sleeping in {@link #await} for what {@link #pushQuietly} pushed. Both read and
   * write {@code waiting} and {@code published} as volatiles, as {@link #push} does: either the
   * poller sees the completion before it sleeps or this sees it waiting.
   */
  void wakePoller() {
    if (waiting) {
      wake();
    }
  }
}
