package io.srdma.host;

import io.srdma.verbs.QueuePair;
import io.srdma.verbs.VerbsException;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.HashSet;
import java.util.Iterator;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.TimeUnit;

/**
 * Moves sessions' queue pairs to RTS off the host's workers. On the soft provider {@link
 * QueuePair#readyToSend} is a TCP connect and a HELLO exchange with the responder the peer named in
 * its HELLO: a peer can make it wait up to the transport timeout (a port that accepts and never
 * answers, or drops SYNs). Here such a wait holds one of this connector's own threads, never a
 * worker, and one tenant holds at most {@code perTenant} of them: the rest wait in the tenant's own
 * queue, so other tenants' connects still find a thread.
 *
 * <p>Bounded: at most {@code threads} connects run at once ({@code <name>-connect-<i>} daemon
 * threads: an idle one takes the next connect, a new one is made only when none is idle, and one
 * idle for {@link #IDLE_SECONDS} ends). A thread frees its connect's slot only once that connect's
 * {@code done} ran and it is ready for the next, so a connect that got a slot always finds a
 * thread, never a refusal. Each session has at most one connect, and tenants with waiting connects
 * are served in turn. Every wait ends by the session's handshake deadline: a connect still waiting
 * then is not started, and one running is interrupted by {@link Connect#cancel} (the watchdog
 * cancels at the deadline; a blocking socket connect or read ends on interrupt) — besides the
 * provider's own transport timeout. The interrupt comes only while {@code readyToSend} runs and is
 * cleared before {@code done}, so it reaches nothing else (no audit write, no log file).
 *
 * <p>Thread-safe.
 */
final class QueuePairConnector implements AutoCloseable {
  /** Seconds an idle connector thread lives. */
  static final int IDLE_SECONDS = 10;

  private final int threads;
  private final int perTenant;
  private final String threadPrefix;
  // tenants with waiting connects, in the order they are served (one served moves to the end)
  private final Map<String, ArrayDeque<Connect>> waiting = new LinkedHashMap<>();
  // connects that hold a slot and wait for a thread to take them
  private final ArrayDeque<Connect> ready = new ArrayDeque<>();
  private final Map<String, Integer> running = new HashMap<>();
  private final Set<Connect> active = new HashSet<>();
  private int runningTotal;
  private int threadsAlive;
  private int threadsIdle;
  private int threadNumber;
  private boolean closed;

  /**
   * @param threadPrefix the threads' names before their number ({@code srdma-host-<n>-connect-})
   * @param threads most connects at once, all tenants
   * @param perTenant most connects at once of one tenant ({@code <= threads})
   */
  QueuePairConnector(String threadPrefix, int threads, int perTenant) {
    if (threads < 1 || perTenant < 1 || perTenant > threads) {
      throw new IllegalArgumentException(
          "connect threads " + threads + ", per tenant " + perTenant);
    }
    this.threads = threads;
    this.perTenant = perTenant;
    this.threadPrefix = threadPrefix;
  }

  /**
   * Queues {@code qp.readyToSend()} for {@code tenant}; {@code done} runs once it ended (connected,
   * failed, cancelled or past its deadline), on a connector thread or on the thread that cancelled
   * it.
   *
   * @param deadlineNanos {@link System#nanoTime} after which it is not started
   */
  Connect connect(String tenant, QueuePair qp, long deadlineNanos, Runnable done) {
    Connect c = new Connect(tenant, qp, deadlineNanos, done);
    List<Connect> ended;
    synchronized (this) {
      if (closed) {
        c.fail(closing());
        ended = List.of(c);
      } else {
        waiting.computeIfAbsent(tenant, t -> new ArrayDeque<>()).add(c);
        ended = dispatch();
      }
    }
    finish(ended);
    return c;
  }

  /** Connects running now, all tenants (tests). */
  synchronized int running() {
    return runningTotal;
  }

  /** Connects running now of {@code tenant} (tests). */
  synchronized int running(String tenant) {
    return running.getOrDefault(tenant, 0);
  }

  /** Connector threads alive now, and how many of them are idle (tests). */
  synchronized int[] threads() {
    return new int[] {threadsAlive, threadsIdle};
  }

  /** Connects waiting for a thread now, all tenants (tests). */
  synchronized int waiting() {
    int n = 0;
    for (ArrayDeque<Connect> q : waiting.values()) {
      n += q.size();
    }
    return n;
  }

  /**
   * Starts waiting connects while threads are free, tenants in turn, each below its share. Caller
   * holds the lock; returns the connects that ended here (past their deadline, or no thread could
   * start), whose {@code done} the caller runs after releasing it.
   */
  private List<Connect> dispatch() {
    List<Connect> ended = new ArrayList<>();
    Connect c;
    while (runningTotal < threads && (c = nextWaiting()) != null) {
      if (System.nanoTime() - c.deadlineNanos > 0) {
        c.fail(
            new VerbsException(
                VerbsException.Reason.IO,
                "modify_qp(RTS)",
                "the session's handshake deadline passed before its connect started"));
        ended.add(c);
        continue;
      }
      running.merge(c.tenant, 1, Integer::sum);
      runningTotal++;
      active.add(c);
      ready.add(c);
      // A thread holds a slot from taking a connect until it is idle again (after its done), so
      // busy threads + ready connects <= threads: a thread is started only while none is idle
      // for it, and the pool never passes `threads`.
      if (ready.size() <= threadsIdle || threadsAlive >= threads) {
        notifyAll();
      } else if (!startThread()) {
        ready.remove(c);
        release(c);
        c.fail(
            new VerbsException(
                VerbsException.Reason.IO, "modify_qp(RTS)", "no connector thread could start"));
        ended.add(c);
      }
    }
    return ended;
  }

  /** Starts one more thread; false if the JVM could not (out of native threads). */
  private boolean startThread() {
    Thread t = new Thread(this::work, threadPrefix + threadNumber++);
    t.setDaemon(true);
    try {
      t.start();
    } catch (OutOfMemoryError e) {
      return false;
    }
    threadsAlive++;
    return true;
  }

  /**
   * A connector thread: takes ready connects until none came for {@link #IDLE_SECONDS} (or the
   * connector closed with none left), and frees each one's slot only after its done ran.
   */
  private void work() {
    Connect c = null;
    for (; ; ) {
      List<Connect> ended = List.of();
      if (c != null) {
        synchronized (this) {
          release(c);
          if (!closed) {
            ended = dispatch();
          }
        }
        finish(ended);
      }
      synchronized (this) {
        c = takeReady();
        if (c == null) {
          threadsAlive--;
          return;
        }
      }
      c.run();
    }
  }

  /**
   * The next ready connect, waiting for one while open and not idle too long. Caller holds the
   * lock.
   */
  private Connect takeReady() {
    long idleUntil = System.nanoTime() + TimeUnit.SECONDS.toNanos(IDLE_SECONDS);
    threadsIdle++;
    try {
      Connect c;
      while ((c = ready.poll()) == null) {
        long left = idleUntil - System.nanoTime();
        if (closed || left <= 0) {
          return null;
        }
        try {
          wait(Math.max(1, TimeUnit.NANOSECONDS.toMillis(left)));
        } catch (InterruptedException e) {
          // only a cancel interrupts, and only while readyToSend runs: not for an idle thread
        }
      }
      return c;
    } finally {
      threadsIdle--;
    }
  }

  /**
   * Takes the first waiting connect of the first tenant below its share, and moves that tenant to
   * the end of the turn; null when there is none. Caller holds the lock.
   */
  private Connect nextWaiting() {
    for (Iterator<Map.Entry<String, ArrayDeque<Connect>>> it = waiting.entrySet().iterator();
        it.hasNext(); ) {
      Map.Entry<String, ArrayDeque<Connect>> e = it.next();
      String tenant = e.getKey();
      if (running.getOrDefault(tenant, 0) >= perTenant) {
        continue;
      }
      ArrayDeque<Connect> q = e.getValue();
      it.remove(); // (the loop ends here: no further next())
      Connect c = q.poll();
      if (!q.isEmpty()) {
        waiting.put(tenant, q);
      }
      return c;
    }
    return null;
  }

  private void release(Connect c) {
    String tenant = c.tenant;
    active.remove(c);
    runningTotal--;
    if (running.merge(tenant, -1, Integer::sum) == 0) {
      running.remove(tenant);
    }
  }

  private static void finish(List<Connect> ended) {
    for (Connect c : ended) {
      c.done.run();
    }
  }

  private static VerbsException closing() {
    return new VerbsException(
        VerbsException.Reason.INVALID_STATE, "modify_qp(RTS)", "the host is closing");
  }

  /**
   * Refuses new connects, ends the waiting ones and cancels the running ones (their threads end as
   * they return). Idempotent.
   */
  @Override
  public void close() {
    List<Connect> ended = new ArrayList<>();
    List<Connect> runningNow;
    synchronized (this) {
      closed = true;
      notifyAll(); // idle threads end; ready connects (cancelled below) end on theirs
      for (ArrayDeque<Connect> q : waiting.values()) {
        for (Connect c : q) {
          c.fail(closing());
          ended.add(c);
        }
      }
      waiting.clear();
      runningNow = List.copyOf(active);
    }
    finish(ended);
    for (Connect c : runningNow) {
      c.cancel(); // an interrupt reaches readyToSend only, never a done
    }
  }

  /** One session's connect: waiting, running or ended. */
  final class Connect {
    private static final int WAITING = 0;
    private static final int RUNNING = 1;
    private static final int ENDED = 2;

    private final String tenant;
    private final QueuePair qp;
    private final long deadlineNanos;
    private final Runnable done;
    // guarded by this Connect
    private int state = WAITING;
    private Thread runner;
    private boolean cancelled;
    private volatile boolean finished;
    private volatile RuntimeException failure;

    private Connect(String tenant, QueuePair qp, long deadlineNanos, Runnable done) {
      this.tenant = tenant;
      this.qp = qp;
      this.deadlineNanos = deadlineNanos;
      this.done = done;
    }

    /** Whether it ended; then {@link #failure} says how. */
    boolean finished() {
      return finished;
    }

    /** Null when the queue pair is ready to send; else why not. Meaningful once finished. */
    RuntimeException failure() {
      return failure;
    }

    /**
     * Ends it soon: a waiting connect is dropped ({@code done} runs here), a running one is
     * interrupted ({@code done} runs on its thread when it returns). Any thread; idempotent.
     */
    void cancel() {
      boolean dropped;
      synchronized (QueuePairConnector.this) {
        ArrayDeque<Connect> q = waiting.get(tenant);
        dropped = q != null && q.remove(this);
        if (q != null && q.isEmpty()) {
          waiting.remove(tenant);
        }
      }
      if (dropped) {
        fail(
            new VerbsException(
                VerbsException.Reason.INVALID_STATE, "modify_qp(RTS)", "cancelled while waiting"));
        done.run();
        return;
      }
      synchronized (this) {
        cancelled = true;
        if (state == RUNNING) {
          runner.interrupt(); // only while readyToSend runs: the thread serves no one else then
        }
      }
    }

    private void fail(RuntimeException why) {
      synchronized (this) {
        state = ENDED;
      }
      failure = why;
      finished = true;
    }

    private void run() {
      RuntimeException why = null;
      synchronized (this) {
        if (cancelled) {
          why =
              new VerbsException(
                  VerbsException.Reason.INVALID_STATE, "modify_qp(RTS)", "cancelled");
        } else {
          state = RUNNING;
          runner = Thread.currentThread();
        }
      }
      try {
        if (why == null) {
          qp.readyToSend();
        }
      } catch (RuntimeException e) {
        why = e;
      } finally {
        synchronized (this) {
          state = ENDED;
          runner = null;
          Thread.interrupted(); // a cancel that came as readyToSend returned: not for later work
        }
      }
      failure = why;
      finished = true;
      done.run(); // then the thread frees its slot (work)
    }
  }
}
