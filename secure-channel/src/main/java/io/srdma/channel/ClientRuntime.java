package io.srdma.channel;

import io.srdma.channel.transport.EventLoop;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.ScheduledThreadPoolExecutor;
import java.util.concurrent.SynchronousQueue;
import java.util.concurrent.ThreadPoolExecutor;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The control plane every {@link SecureRdmaClient} of a process shares, whatever their number: one
 * event loop ({@value #LOOP_NAME}: TLS over non-blocking sockets for every client), one timer
 * ({@value #TIMER_NAME}: keep-alive, request deadlines, host certificate re-checks, region-key
 * grace) and {@link #WORKERS} workers ({@code srdma-client-worker-<i>}: TLS delegated tasks, each
 * client's control frames on its strand, and whatever the timer starts, so a blocking write or a
 * listener never holds up the loop or the timer). Reference-counted like {@link
 * SharedDeviceContext}: started by the first client, stopped when the last one closes (each join
 * bounded). Thread-safe (one lock, held only to start, count and stop).
 */
final class ClientRuntime implements AutoCloseable {
  private static final Logger LOG = LoggerFactory.getLogger(ClientRuntime.class);
  static final String LOOP_NAME = "srdma-client-control";
  static final String TIMER_NAME = "srdma-client-timer";
  static final String WORKER_PREFIX = "srdma-client-worker-";
  static final String LISTENER_PREFIX = "srdma-client-listener-";

  /** Workers: enough for delegated TLS tasks of a few concurrent connects and the strands. */
  static final int WORKERS = Math.min(4, Math.max(2, Runtime.getRuntime().availableProcessors()));

  private static final Object LOCK = new Object();
  private static ClientRuntime current; // guarded by LOCK

  private final EventLoop loop;
  private final ScheduledThreadPoolExecutor timer;
  private final ExecutorService workers;
  // the application's listeners (revocation, session loss), which may block (ask for a grant,
  // connect again): never on a worker, whose few threads also read every host's frames
  private final ThreadPoolExecutor listeners;
  private final Set<Thread> workerThreads = ConcurrentHashMap.newKeySet();
  private int users; // guarded by LOCK

  private ClientRuntime() throws IOException {
    this.loop = new EventLoop(LOOP_NAME);
    this.timer =
        new ScheduledThreadPoolExecutor(
            1,
            r -> {
              Thread t = new Thread(r, TIMER_NAME);
              t.setDaemon(true);
              return t;
            });
    timer.setRemoveOnCancelPolicy(true); // a closed client's periodic tasks leave no trace
    AtomicInteger n = new AtomicInteger();
    this.workers =
        Executors.newFixedThreadPool(
            WORKERS,
            r -> {
              Thread t = new Thread(r, WORKER_PREFIX + n.getAndIncrement());
              t.setDaemon(true);
              workerThreads.add(t);
              return t;
            });
    AtomicInteger m = new AtomicInteger();
    this.listeners =
        new ThreadPoolExecutor(
            0,
            Integer.MAX_VALUE,
            30,
            TimeUnit.SECONDS,
            new SynchronousQueue<>(),
            r -> {
              Thread t = new Thread(r, LISTENER_PREFIX + m.getAndIncrement());
              t.setDaemon(true);
              return t;
            });
    loop.start();
  }

  /**
   * Runs an application listener on a thread of its own (idle ones are reused, and end after 30 s);
   * false when the runtime is stopping.
   */
  boolean listen(Runnable task) {
    try {
      listeners.execute(task);
      return true;
    } catch (RejectedExecutionException e) {
      return false;
    }
  }

  /** A reference to the process's runtime, started if none runs; {@link #close} gives it back. */
  static ClientRuntime acquire() {
    synchronized (LOCK) {
      if (current == null) {
        try {
          current = new ClientRuntime();
        } catch (IOException e) {
          throw new UncheckedIOException("cannot open a selector", e);
        }
        LOG.debug("started the client control plane ({} workers)", WORKERS);
      }
      current.users++;
      return current;
    }
  }

  /** Whether a runtime runs now (for tests). */
  static boolean isRunning() {
    synchronized (LOCK) {
      return current != null;
    }
  }

  EventLoop loop() {
    return loop;
  }

  ScheduledThreadPoolExecutor timer() {
    return timer;
  }

  ExecutorService workers() {
    return workers;
  }

  /** Runs {@code task} on a worker; false when the runtime is stopping (the client closes then). */
  boolean execute(Runnable task) {
    try {
      workers.execute(task);
      return true;
    } catch (RejectedExecutionException e) {
      return false;
    }
  }

  /** Gives one reference back; the last one stops the threads. Call once per {@link #acquire}. */
  @Override
  public void close() {
    synchronized (LOCK) {
      if (users == 0 || --users > 0) {
        return;
      }
      current = null;
    }
    timer.shutdownNow();
    workers.shutdown();
    listeners.shutdown(); // not waited for: the last client may close from a listener
    if (workerThreads.contains(Thread.currentThread())) {
      loop.close(); // the last client closed from a listener: the workers finish on their own
      return;
    }
    try {
      if (!workers.awaitTermination(5, TimeUnit.SECONDS)) {
        LOG.warn("client workers did not stop within 5 s");
        workers.shutdownNow();
      }
      if (!timer.awaitTermination(5, TimeUnit.SECONDS)) {
        LOG.warn("client timer did not stop within 5 s");
      }
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      workers.shutdownNow();
    }
    loop.close();
    LOG.debug("stopped the client control plane");
  }
}
