package io.srdma.verbs.soft;

import io.srdma.verbs.CpuSet;
import io.srdma.verbs.ThreadPlacement;
import java.io.IOException;
import java.nio.channels.ClosedSelectorException;
import java.nio.channels.SelectionKey;
import java.nio.channels.Selector;
import java.util.ArrayList;
import java.util.Queue;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import java.util.function.Consumer;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * One selector thread of a device context's responder pool: it multiplexes many incoming
 * connections, each a non-blocking {@link Responder} state machine, so that the number of threads
 * does not grow with the number of queue pairs. A responder waiting for time rather than bytes (a
 * receive not posted yet, a QP not in RTR yet, a payload or a peer that stalls) is looked at again
 * when its deadline passes; one that waits for a receive or RTR is looked at every {@link
 * #PARK_POLL_NANOS} until then, and one waiting for a receive also as soon as one is posted ({@link
 * #poke}).
 *
 * <p>A loop may also have no thread of its own ({@link #hosted}): a completion queue created with
 * {@link io.srdma.verbs.CompletionProgress#POLLER} holds one, and whoever polls that queue drives
 * it ({@link #serviceQueues}, {@link #scanIfDue}) through the queue's selector, under the queue's
 * poll lock. Responders move there once their queue pair is known and checked ({@link Responder});
 * connections still in their handshake stay on the device's threaded loops.
 *
 * <p>Thread-safe entry points: {@link #adopt}, {@link #closeLater}, {@link #poke} and {@link
 * #shutdown}; all else runs on the loop's own thread (hosted: the queue's poller).
 */
final class ResponderLoop implements Runnable {
  private static final Logger LOG = LoggerFactory.getLogger(ResponderLoop.class);

  /** How often a parked responder (waiting for a receive or for RTR) is retried. */
  static final long PARK_POLL_NANOS = TimeUnit.MILLISECONDS.toNanos(1);

  /**
   * At most this many non-blocking looks after a busy one before sleeping in the selector (fewer
   * wake-ups when the next request is microseconds away).
   */
  static final int SPINS = 20;

  private static final long IDLE_SCAN_NANOS = TimeUnit.SECONDS.toNanos(1);

  private final Selector selector;
  private final Thread thread; // null when hosted
  private final SoftCompletionQueue host; // the queue whose poller drives a hosted loop, else null
  private final ThreadPlacement placement;
  private final Queue<Responder> adopted = new ConcurrentLinkedQueue<>();
  private final Queue<Responder> closing = new ConcurrentLinkedQueue<>();
  private final Queue<Responder> poked = new ConcurrentLinkedQueue<>();
  private final AtomicLong pokes = new AtomicLong();
  private final ArrayList<Responder> members = new ArrayList<>();
  private volatile int memberCount; // members.size(), for other threads (tests)
  private final Consumer<SelectionKey> onReady = ResponderLoop::ready;
  private long nextScanNanos;

  /**
   * The looks the next busy period may take. A look is a system call, and on a small machine it
   * takes the CPU that the threads producing the next request need: once that request is further
   * away than a few looks, spinning only delays it (session 11, docs/performance.md).
   */
  private int spinBudget = SPINS;

  private volatile boolean stopped;

  ResponderLoop(String name) throws IOException {
    this(name, null);
  }

  /**
   * @param cpus the CPUs the loop's thread pins itself to before it serves anything, or null
   */
  ResponderLoop(String name, CpuSet cpus) throws IOException {
    placement = new ThreadPlacement(cpus);
    selector = Selector.open();
    thread = new Thread(this, name);
    thread.setDaemon(true);
    host = null;
    nextScanNanos = System.nanoTime() + IDLE_SCAN_NANOS;
  }

  private ResponderLoop(SoftCompletionQueue host, Selector selector) {
    this.placement = new ThreadPlacement(null);
    this.selector = selector;
    this.thread = null;
    this.host = host;
    nextScanNanos = System.nanoTime() + IDLE_SCAN_NANOS;
  }

  /**
   * A loop without a thread, driven by the pollers of {@code host} through its {@code selector}
   * (the queue's own, which also watches its requesters' responses).
   */
  static ResponderLoop hosted(SoftCompletionQueue host, Selector selector) {
    return new ResponderLoop(host, selector);
  }

  /** The responders this loop drives now (any thread; tests). */
  int memberCount() {
    return memberCount;
  }

  /** Whether pollers of a completion queue drive this loop (it has no thread). */
  boolean isHosted() {
    return host != null;
  }

  /**
   * Starts the thread and, when it is to be pinned, waits until it is.
   *
   * @throws io.srdma.verbs.VerbsException the thread could not be pinned (it has ended)
   */
  void start() {
    thread.start();
    placement.awaitApplied("soft responder " + thread.getName());
  }

  /** Whether the calling thread may drive this loop's responders now. */
  boolean inLoop() {
    return host == null ? Thread.currentThread() == thread : host.pollingHere();
  }

  /** Takes over a freshly accepted connection, or one moving here (any thread). */
  void adopt(Responder r) {
    adopted.add(r);
    selector.wakeup();
  }

  /**
   * Asks the loop to drop {@code r} (any thread); the responder already marked itself closed. A
   * hosted loop whose queue nobody polls right now drops it at once, on the calling thread.
   */
  void closeLater(Responder r) {
    if (host != null && host.runIfIdle(r::terminate)) {
      return;
    }
    closing.add(r);
    selector.wakeup();
  }

  /**
   * Asks the loop to drive {@code r} now, not at its next timed look (any thread): a receive it
   * waits for was posted. The poller of a hosted loop itself (reposting after it polled) needs no
   * wake-up: it drives {@code r} at its next poll.
   */
  void poke(Responder r) {
    pokes.incrementAndGet();
    poked.add(r);
    if (host == null || !host.isPoller()) {
      selector.wakeup();
    }
  }

  /** Responders driven early by {@link #poke} so far (any thread; tests). */
  long pokes() {
    return pokes.get();
  }

  /** Asks the loop to look at its responders' timers no later than {@code deadlineNanos}. */
  void wakeBy(long deadlineNanos) {
    if (deadlineNanos - nextScanNanos < 0) {
      nextScanNanos = deadlineNanos;
    }
  }

  Selector selector() {
    return selector;
  }

  @Override
  public void run() {
    if (!placement.apply()) {
      stopped = true;
    }
    try {
      while (!stopped) {
        long now = System.nanoTime();
        long waitMs = Math.max(1, TimeUnit.NANOSECONDS.toMillis(nextScanNanos - now));
        int ready = selector.select(onReady, waitMs);
        if (ready > 0) {
          spinAfterWork();
        }
        takeAdopted();
        takeClosing();
        takePoked();
        now = System.nanoTime();
        if (now - nextScanNanos >= 0) {
          scan(now);
        }
      }
    } catch (IOException | ClosedSelectorException e) {
      if (!stopped) {
        LOG.error("soft responder loop {} failed: {}", thread.getName(), e.toString());
      }
    } finally {
      for (int i = members.size() - 1; i >= 0; i--) {
        if (i < members.size()) {
          members.get(i).terminate(); // removes itself
        }
      }
      members.clear();
      drainAfterStop();
      try {
        selector.close();
      } catch (IOException e) {
        LOG.debug("closing a responder selector: {}", e.toString());
      }
    }
  }

  /**
   * Busy: the next request may be microseconds away, so look again before sleeping, as many times
   * as {@link #spinBudget} allows. Looking again paid off: the whole budget next time; it did not:
   * half (at least one look, so it can pay off again).
   */
  void spinAfterWork() throws IOException {
    boolean found = false;
    for (int spin = 0; spin < spinBudget; spin++) {
      Thread.onSpinWait();
      if (selector.selectNow(onReady) > 0) {
        found = true;
        spinBudget = SPINS;
        spin = -1;
      }
    }
    if (!found) {
      spinBudget = Math.max(1, spinBudget / 2);
    }
  }

  /** The looks the next busy period may take (tests). */
  int spinBudget() {
    return spinBudget;
  }

  private static void ready(SelectionKey key) {
    if (key.isValid()) {
      ((Responder) key.attachment()).drive();
    }
  }

  private void takeAdopted() {
    Responder r;
    while ((r = adopted.poll()) != null) {
      members.add(r);
      memberCount = members.size();
      r.attach(this);
    }
  }

  private void takePoked() {
    Responder r;
    while ((r = poked.poll()) != null) {
      ResponderLoop owner = r.owner();
      if (owner != this) {
        owner.poke(r); // it moved to another loop after the poke was addressed here
      } else if (r.isAttachedTo(this)) {
        r.drive(); // a terminated one returns at once
      } // else: not taken over yet; attach drives it
    }
  }

  private void takeClosing() {
    Responder r;
    while ((r = closing.poll()) != null) {
      ResponderLoop owner = r.owner();
      if (owner != this) {
        owner.closeLater(r);
      } else {
        r.terminate();
      }
    }
  }

  // ---- hosted: driven by a completion queue's poller, under its poll lock ----

  /** Takes what other threads handed over: connections moving here, closes and pokes. */
  void serviceQueues() {
    if (!adopted.isEmpty()) {
      takeAdopted();
    }
    if (!closing.isEmpty()) {
      takeClosing();
    }
    if (!poked.isEmpty()) {
      takePoked();
    }
  }

  /** Drives the responders whose timer is due, if any may be. */
  void scanIfDue(long now) {
    if (now - nextScanNanos >= 0) {
      scan(now);
    }
  }

  /** When a hosted poller must look at this loop's timers next. */
  long nextScanNanos() {
    return nextScanNanos;
  }

  /** A hosted loop's queue is closing: drop every responder still here (caller polls). */
  void terminateAll() {
    serviceQueues();
    for (int i = members.size() - 1; i >= 0; i--) {
      if (i < members.size()) {
        members.get(i).terminate(); // removes itself
      }
    }
    members.clear();
    memberCount = 0;
    drainAfterStop();
  }

  /** Forgets a terminated responder (loop thread). */
  void remove(Responder r) {
    int i = members.indexOf(r);
    if (i >= 0) {
      int last = members.size() - 1;
      members.set(i, members.get(last));
      members.remove(last);
      memberCount = members.size();
    }
  }

  /** Drives every responder whose timer is due, and finds the next due time. */
  private void scan(long now) {
    nextScanNanos = now + IDLE_SCAN_NANOS;
    for (int i = members.size() - 1; i >= 0; i--) {
      if (i >= members.size()) {
        continue; // a responder driven below removed itself and others
      }
      Responder r = members.get(i);
      long due = r.dueNanos();
      if (due != Responder.NO_DEADLINE && now - due >= 0) {
        r.drive();
        due = r.dueNanos();
      }
      if (due != Responder.NO_DEADLINE) {
        wakeBy(due);
      }
    }
  }

  /** Stops the loop and closes its connections (bounded wait). */
  void shutdown() {
    stopped = true;
    if (thread.getState() == Thread.State.NEW) { // never started: nothing runs, close here
      try {
        selector.close();
      } catch (IOException e) {
        LOG.debug("closing the selector of {}: {}", thread.getName(), e.toString());
      }
      return;
    }
    selector.wakeup();
    if (!inLoop()) {
      try {
        thread.join(TimeUnit.SECONDS.toMillis(5));
      } catch (InterruptedException e) {
        Thread.currentThread().interrupt();
      }
    }
  }

  private void drainAfterStop() {
    Responder r;
    while ((r = adopted.poll()) != null) {
      r.terminate();
    }
    takeClosing();
  }
}
