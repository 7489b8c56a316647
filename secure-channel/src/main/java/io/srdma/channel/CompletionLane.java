package io.srdma.channel;

import io.srdma.verbs.CompletionQueue;
import io.srdma.verbs.DeviceContext;
import io.srdma.verbs.VerbsException;
import io.srdma.verbs.WorkCompletion;
import io.srdma.verbs.internal.QpnTable;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.locks.LockSupport;
import java.util.concurrent.locks.ReentrantLock;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * One completion queue shared by the queue pairs of many clients, and the thread that polls it
 * ({@code srdma-client-cq-<k>}): each polled batch (up to {@value #BATCH} completions) is handed,
 * by queue pair number, to each client's {@link CompletionTarget} on the polling thread itself. The
 * thread spins (the largest {@code idleSpins} of its clients) before it parks in the queue's wait
 * (woken by the next completion, at most {@value #PARK_MILLIS} ms); a client may poll too ({@link
 * #poll()}), and then dispatches the completions of every client of the lane.
 *
 * <p>Room: a client reserves its need (send depth + 8) before its queue pair is created on the
 * queue, which grows ({@link CompletionQueue#resize}) to cover the sum of the reservations (at
 * least doubling, within the device's maximum); a leaving client's reservation is given back only
 * once a poll drained the queue after its queue pair was destroyed (its flushed completions are
 * gone then), and the queue shrinks to twice what is reserved once it is more than four times that
 * (a shrink the provider refuses leaves it as it is). A completion of a queue pair no longer
 * registered is dropped and counted. A failure of the queue (overrun, I/O) fails the data path of
 * every client of the lane.
 *
 * <p>Thread-safe: one poller at a time (a caller that finds another polling returns 0); joining and
 * leaving under this object's monitor.
 */
final class CompletionLane {
  private static final Logger LOG = LoggerFactory.getLogger(CompletionLane.class);
  static final String THREAD_PREFIX = "srdma-client-cq-";
  static final int BATCH = 32;
  static final int PARK_MILLIS = 100;
  private static final Duration PARK = Duration.ofMillis(PARK_MILLIS);

  /** The queue's size with no client, and the least it shrinks to. */
  static final int MIN_CAPACITY = 16;

  /** Longest a leaving client waits for a batch being dispatched to it to end. */
  private static final long LEAVE_WAIT_NANOS = TimeUnit.SECONDS.toNanos(5);

  private final CompletionQueue cq;
  private final int maxCapacity;
  private final String name;
  private final ReentrantLock lock = new ReentrantLock();
  private final WorkCompletion[] wcs = new WorkCompletion[BATCH];
  private final CompletionTarget[] touched = new CompletionTarget[BATCH];
  private final Thread thread;
  private volatile QpnTable<CompletionTarget> table = QpnTable.empty();
  private volatile int spins;
  private volatile boolean stopped;
  private volatile boolean failed;

  /** Odd while a batch is being dispatched; written under the poll lock only. */
  private volatile long dispatching;

  /** Reservations of clients that left, given back at the next drain; under the monitor. */
  private volatile int releasing;

  private volatile long dropped;
  private int clients; // guarded by this
  private int reserved; // guarded by this

  CompletionLane(DeviceContext context, int index) {
    this.maxCapacity = context.queryDevice().maxCqe();
    this.cq = context.createCompletionQueue(MIN_CAPACITY);
    this.name = THREAD_PREFIX + index;
    for (int i = 0; i < BATCH; i++) {
      wcs[i] = new WorkCompletion();
    }
    thread = new Thread(this::run, name);
    thread.setDaemon(true);
    thread.start();
  }

  /** The queue the joining client creates its queue pair on. */
  CompletionQueue cq() {
    return cq;
  }

  String name() {
    return name;
  }

  synchronized int clients() {
    return clients;
  }

  boolean failed() {
    return failed;
  }

  /** Completions of queue pairs no longer (or not yet) registered, dropped. */
  long dropped() {
    return dropped;
  }

  /**
   * Reserves room for a joining client's {@code need} completions, growing the queue first: call
   * before creating the client's queue pair on {@link #cq()}.
   *
   * @throws VerbsException when the queue cannot grow (INVALID_ARGUMENT past the device's maximum)
   */
  synchronized void reserve(int need, int idleSpins) {
    int total = reserved + need;
    int capacity = cq.capacity();
    if (total > capacity) {
      // at least double, so that a thousand clients joining do not copy the queue a thousand times
      cq.resize(total > maxCapacity ? total : Math.min(maxCapacity, Math.max(total, 2 * capacity)));
    }
    reserved = total;
    clients++;
    spins = Math.max(spins, idleSpins);
  }

  /** Completions of {@code qpn} go to {@code target} from now on. */
  void register(int qpn, CompletionTarget target) {
    synchronized (this) {
      table = table.with(qpn, target);
    }
    if (failed) {
      target.laneFailed();
    }
  }

  /**
   * A client leaves, after its queue pair was destroyed: no completion reaches {@code qpn}'s target
   * once this returns (it waits for a batch being dispatched, unless called while polling this
   * lane). {@code qpn} -1: the client never registered.
   */
  void release(int qpn, int need) {
    synchronized (this) {
      if (qpn != -1) {
        table = table.without(qpn);
      }
      clients--;
      releasing += need;
    }
    if (!lock.isHeldByCurrentThread()) {
      long d = dispatching;
      long deadline = System.nanoTime() + LEAVE_WAIT_NANOS;
      while ((d & 1) != 0 && dispatching == d && System.nanoTime() - deadline < 0) {
        LockSupport.parkNanos(10_000);
      }
    }
  }

  /** Handles the completions there are now; 0 when another thread polls (or the lane failed). */
  int poll() {
    if (!lock.tryLock()) {
      return 0;
    }
    try {
      return pollLocked(false);
    } finally {
      lock.unlock();
    }
  }

  private void run() {
    int idle = 0;
    while (!stopped && !failed) {
      if (poll() > 0) {
        idle = 0;
      } else if (++idle <= spins) {
        Thread.onSpinWait();
      } else {
        idle = 0;
        lock.lock();
        try {
          pollLocked(true);
        } finally {
          lock.unlock();
        }
      }
    }
  }

  /** The caller holds the lock. */
  private int pollLocked(boolean wait) {
    if (stopped || failed) {
      return 0;
    }
    int given = releasing; // left before this poll: their completions are queued already
    int n;
    try {
      n = wait ? cq.await(wcs, PARK) : cq.poll(wcs);
    } catch (RuntimeException e) {
      if (!stopped) {
        fail(e);
      }
      return 0;
    }
    if (n < BATCH && given > 0) {
      settle(given); // the queue was drained: the leavers' completions were all taken
    }
    dispatch(n);
    return n;
  }

  /** The caller holds the lock. */
  private void dispatch(int n) {
    if (n == 0) {
      return;
    }
    dispatching++;
    try {
      QpnTable<CompletionTarget> t = table;
      int k = 0;
      for (int i = 0; i < n; i++) {
        WorkCompletion wc = wcs[i];
        CompletionTarget target = t.get(wc.qpNum());
        if (target == null) {
          dropped++;
          if (LOG.isDebugEnabled()) {
            LOG.debug("{}: dropped a completion of queue pair {} (left): {}", name, wc.qpNum(), wc);
          }
          continue;
        }
        if (!target.touched) {
          target.touched = true;
          touched[k++] = target;
        }
        try {
          target.onCompletion(wc);
        } catch (RuntimeException e) {
          LOG.error("{}: handling a completion failed", target, e);
          target.laneFailed();
        }
      }
      for (int j = 0; j < k; j++) {
        CompletionTarget target = touched[j];
        touched[j] = null;
        target.touched = false;
        try {
          target.flush();
        } catch (RuntimeException e) {
          LOG.error("{}: handling a completion failed", target, e);
          target.laneFailed();
        }
      }
    } finally {
      dispatching++;
    }
  }

  /** Gives back what leavers reserved; halves the queue when it is over four times that. */
  private synchronized void settle(int given) {
    releasing -= given;
    reserved -= given;
    int want = Math.max(MIN_CAPACITY, 2 * reserved);
    if (cq.capacity() > 2 * want) {
      try {
        cq.resize(want);
      } catch (VerbsException e) {
        LOG.debug("{}: left the queue at {} ({})", name, cq.capacity(), e.getMessage());
      }
    }
  }

  /** The queue failed: every client of the lane loses its data path, none silently. */
  private void fail(RuntimeException e) {
    List<CompletionTarget> victims;
    synchronized (this) {
      victims = table.values();
      for (CompletionTarget t : victims) {
        t.laneFailed();
      }
      failed = true; // a client registering from now on is failed by register
    }
    LOG.error(
        "{}: completion queue failed; the data path of its {} client(s) is lost",
        name,
        victims.size(),
        e);
  }

  /** Stops the thread (waiting at most 5 s) and destroys the queue: its clients have all left. */
  void close() {
    stopped = true;
    if (Thread.currentThread() != thread) {
      try {
        thread.join(5_000);
      } catch (InterruptedException e) {
        Thread.currentThread().interrupt();
      }
    }
    try {
      cq.close();
    } catch (RuntimeException e) {
      LOG.warn("{}: closing the completion queue failed: {}", name, e.getMessage());
    }
  }
}
