package io.srdma.host;

import io.srdma.channel.record.RecordOpener;
import io.srdma.verbs.CompletionQueue;
import io.srdma.verbs.CpuSet;
import io.srdma.verbs.ThreadPlacement;
import io.srdma.verbs.WorkCompletion;
import io.srdma.verbs.internal.QpnTable;
import java.nio.ByteBuffer;
import java.time.Duration;
import java.util.Arrays;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * One opener thread ({@code srdma-host-<n>-opener-<i>}): owns a completion queue that the receive
 * queues of its sessions report to, polls it, and opens and delivers each record on this same
 * thread (no hand-off between completion and opening). A session is assigned to one opener for its
 * whole life, so its records are opened and delivered in the order they completed. The plaintext
 * buffer, the record copy its sessions' openers share ({@link #workspace}) and the {@link
 * ReceivedRecord} handed to listeners are this thread's own. With {@link
 * HostOptions#openerProgress} {@code POLLER} (the default) its queue's polls and waits also read
 * and place its sessions' incoming requests on the soft provider, so the socket, the placement and
 * the opening are all this thread's work.
 *
 * <p>Idle: it spins on {@link CompletionQueue#poll} for {@link #SPIN_NANOS} after the last
 * completion (reading the clock once every {@link #CLOCK_EVERY} empty polls: on a VM's kvm-clock a
 * read costs as much as a poll), then waits on {@link CompletionQueue#await} at most {@link #PARK}
 * at a time. It spins only while its recent idle gaps were short enough for a spin to bridge
 * ({@link SpinAdvisor}), and not after a stream ({@link #STREAM_STRETCH} records or more without
 * running dry: a writer's window, whose next records need the cores a spin would hold — measured on
 * 2 vCPUs, 6 % less CPU per 64 B message, docs/performance.md session 24); otherwise it goes
 * straight to the wait (whose own back-off spins and yields briefly before it parks), leaving the
 * core to the threads that produce its work. While a {@link #drain} waits it polls without waiting,
 * so a drain of an idle opener takes at most one {@link #PARK}. A receive credit that could not be
 * written when it fell due ({@link ReceiveCredits}) is tried again after every poll, and an opener
 * that owes one waits at most {@link #OWED_WAIT} at a time.
 *
 * <p>{@link #attach}, {@link #detach}, {@link #drain} and {@link #stop} are thread-safe; the rest
 * runs on the opener thread.
 */
final class OpenerThread implements Runnable {
  private static final Logger LOG = LoggerFactory.getLogger(OpenerThread.class);

  /** How long an opener keeps polling after its last completion before it waits. */
  static final long SPIN_NANOS = 50_000;

  /**
   * Records opened without running dry that make a stretch a stream: after one, the opener does not
   * spin (see the class comment).
   */
  static final int STREAM_STRETCH = 16;

  /** Empty polls between two looks at the clock while spinning (a power of two). */
  static final int CLOCK_EVERY = 64;

  /**
   * Longest single wait of an idle opener: also the longest a {@link #drain} (a RELEASE of a WRITE
   * grant, a session's end, on a shared worker) waits for an idle opener to look again.
   */
  static final Duration PARK = Duration.ofMillis(10);

  /** Longest single wait of an opener that owes a receive credit it could not write yet. */
  static final Duration OWED_WAIT = Duration.ofNanos(100_000);

  private final CompletionQueue queue;
  private final Thread thread;
  private final ThreadPlacement placement;
  private volatile QpnTable<RecordReceiver> byQpn = QpnTable.empty(); // copy on write
  private final Object attachLock = new Object();
  private final WorkCompletion[] completions = new WorkCompletion[32];
  private final ByteBuffer plain;
  private final RecordOpener.Workspace workspace;
  private final ReceivedRecord received = new ReceivedRecord();
  private final SpinAdvisor spin = new SpinAdvisor(SPIN_NANOS);
  private final AtomicLong drained = new AtomicLong();
  private final AtomicInteger drainWaiters = new AtomicInteger();
  private final Object drainLock = new Object();
  private RecordReceiver[] owing = new RecordReceiver[4]; // credits owed, not written yet
  private int owingCount;

  /** Sessions assigned (guarded by the pool). */
  int load;

  private volatile boolean stopped;

  OpenerThread(String name, CompletionQueue queue, int maxRecordPayload) {
    this(name, queue, maxRecordPayload, null);
  }

  /**
   * @param cpus the CPUs the thread pins itself to before it polls, or null to leave it unpinned
   */
  OpenerThread(String name, CompletionQueue queue, int maxRecordPayload, CpuSet cpus) {
    this.placement = new ThreadPlacement(cpus);
    this.queue = queue;
    this.plain = RecordOpener.newPlaintextBuffer(maxRecordPayload);
    this.workspace = new RecordOpener.Workspace(maxRecordPayload);
    for (int i = 0; i < completions.length; i++) {
      completions[i] = new WorkCompletion();
    }
    this.thread = new Thread(this, name);
    thread.setDaemon(true);
  }

  /** The completion queue a session's queue pair reports receives to. */
  CompletionQueue queue() {
    return queue;
  }

  /**
   * The record copy every session of this opener opens into ({@link RecordOpener#forSchedule(
   * io.srdma.keys.KeySchedule, int, RecordOpener.Workspace)}): used on this thread only.
   */
  RecordOpener.Workspace workspace() {
    return workspace;
  }

  Thread thread() {
    return thread;
  }

  /**
   * Starts the thread and, when it is to be pinned, waits until it is.
   *
   * @throws io.srdma.verbs.VerbsException the thread could not be pinned (it has ended)
   */
  void start() {
    thread.start();
    placement.awaitApplied("opener " + thread.getName());
  }

  /** Routes completions of queue pair {@code qpn} to {@code receiver} from now on. */
  void attach(int qpn, RecordReceiver receiver) {
    synchronized (attachLock) {
      byQpn = byQpn.with(qpn, receiver);
    }
  }

  /** Completions of {@code qpn} are dropped from now on. */
  void detach(int qpn) {
    synchronized (attachLock) {
      byQpn = byQpn.without(qpn);
    }
  }

  @Override
  public void run() {
    if (!placement.apply()) {
      return; // the starter reports it
    }
    long idleSince = System.nanoTime();
    int empty = 0; // polls in a row that found nothing
    int stretch = 0; // records since the opener last ran dry
    boolean spinning = true;
    while (!stopped) {
      int n;
      try {
        // a drain waits for two looks that started after it: poll, do not park, while one waits
        n =
            spinning || drainWaiters.get() > 0
                ? queue.poll(completions)
                : queue.await(completions, owingCount > 0 ? OWED_WAIT : PARK);
      } catch (RuntimeException e) {
        if (!stopped) {
          LOG.error("{}: completion queue failed", thread.getName(), e);
        }
        return;
      }
      if (n > 0 && empty > 0) {
        spin.gapEnded(System.nanoTime() - idleSince); // one clock read per idle stretch's end
      }
      QpnTable<RecordReceiver> table = byQpn;
      for (int i = 0; i < n; i++) {
        RecordReceiver r = table.get(completions[i].qpNum());
        if (r != null) {
          try {
            r.onReceive(completions[i], plain, received);
          } catch (RuntimeException e) {
            // a bug must not stop the thread that opens other sessions' records
            LOG.error("{}: opening a record failed", thread.getName(), e);
          }
        }
      }
      if (owingCount > 0) {
        flushOwed();
      }
      if (n > 0) {
        empty = 0;
        stretch += n;
        spinning = true;
      } else if (++empty == 1) {
        idleSince = System.nanoTime(); // the clock is read once per idle stretch, then 1 in 64
        spinning = stretch < STREAM_STRETCH && spin.shouldSpin();
        stretch = 0;
      } else if ((empty & (CLOCK_EVERY - 1)) == 0 && System.nanoTime() - idleSince >= SPIN_NANOS) {
        spinning = false;
      } else {
        Thread.onSpinWait();
      }
      if (n < completions.length) {
        drained.incrementAndGet();
        if (drainWaiters.get() > 0) {
          synchronized (drainLock) {
            drainLock.notifyAll();
          }
        }
      }
    }
  }

  /** The opener thread: {@code r} owes a credit it could not write; tried after every poll. */
  void owe(RecordReceiver r) {
    if (owingCount == owing.length) {
      owing = Arrays.copyOf(owing, 2 * owing.length);
    }
    owing[owingCount++] = r;
  }

  private void flushOwed() {
    int kept = 0;
    for (int i = 0; i < owingCount; i++) {
      RecordReceiver r = owing[i];
      owing[i] = null;
      boolean done;
      try {
        done = r.flushCredits();
      } catch (RuntimeException e) {
        LOG.error("{}: writing a receive credit failed", thread.getName(), e);
        r.owing = false;
        done = true;
      }
      if (!done) {
        owing[kept++] = r;
      }
    }
    owingCount = kept;
  }

  /**
   * Waits (bounded) until this opener has emptied its queue twice since the call, so every
   * completion already queued when a session ends (records written just before a CLOSE that
   * overtook them on the control connection) is opened before the session detaches. Returns at once
   * once the opener stopped.
   */
  void drain(Duration limit) {
    long deadline = System.nanoTime() + limit.toNanos();
    drainWaiters.incrementAndGet();
    try {
      synchronized (drainLock) {
        long target = drained.get() + 2;
        while (drained.get() < target && !stopped) {
          long left = deadline - System.nanoTime();
          if (left <= 0) {
            return;
          }
          try {
            drainLock.wait(Math.max(1, Math.min(left / 1_000_000, 10)));
          } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            return;
          }
        }
      }
    } finally {
      drainWaiters.decrementAndGet();
    }
  }

  /** Asks the thread to stop (it does within {@link #PARK}); drains waiting return. */
  void stop() {
    stopped = true;
    synchronized (drainLock) {
      drainLock.notifyAll();
    }
  }
}
