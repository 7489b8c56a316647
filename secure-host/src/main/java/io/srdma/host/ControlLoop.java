package io.srdma.host;

import java.io.IOException;
import java.nio.channels.SelectionKey;
import java.nio.channels.Selector;
import java.util.Queue;
import java.util.concurrent.ConcurrentLinkedQueue;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * One of the host's event-loop threads ({@code srdma-host-<n>-control-<i>}): a selector over many
 * control connections (and, on the first loop, the listening socket), plus a queue of tasks other
 * threads hand it. Nothing on it blocks: TLS delegated tasks and frame handling run on the host's
 * workers. {@link #execute}, {@link #wakeup}, {@link #inLoop} and {@link #close} are thread-safe.
 */
final class ControlLoop implements Runnable {
  private static final Logger LOG = LoggerFactory.getLogger(ControlLoop.class);

  /** What a registered key's attachment does when its channel is ready. */
  interface Ready {
    void onReady(SelectionKey key);
  }

  private final Selector selector;
  private final Thread thread;
  private final Queue<Runnable> tasks = new ConcurrentLinkedQueue<>();
  private volatile boolean running = true;

  ControlLoop(String name) throws IOException {
    this.selector = Selector.open();
    this.thread = new Thread(this, name);
    thread.setDaemon(true);
  }

  Selector selector() {
    return selector;
  }

  void start() {
    thread.start();
  }

  boolean inLoop() {
    return Thread.currentThread() == thread;
  }

  /** Runs {@code task} on the loop's thread soon (at once when called on it, after the current). */
  void execute(Runnable task) {
    tasks.add(task);
    if (!inLoop()) {
      selector.wakeup();
    }
  }

  void wakeup() {
    selector.wakeup();
  }

  @Override
  public void run() {
    while (running) {
      try {
        selector.select(this::dispatch, 1000);
        Runnable t;
        while ((t = tasks.poll()) != null) {
          t.run();
        }
      } catch (IOException | RuntimeException e) {
        // one connection's failure must not stop the loop every other connection depends on
        LOG.error("{}: event loop step failed", thread.getName(), e);
      }
    }
  }

  private void dispatch(SelectionKey key) {
    Object a = key.attachment();
    if (a instanceof ControlConnection c) {
      c.onReady(key);
    } else if (a instanceof Ready r) {
      r.onReady(key);
    }
  }

  /** Stops the loop and closes its selector (waits at most 10 s for the thread). */
  void close() {
    running = false;
    selector.wakeup();
    if (!inLoop()) {
      try {
        thread.join(10_000);
        if (thread.isAlive()) {
          LOG.warn("{} did not stop within 10 s", thread.getName());
        }
      } catch (InterruptedException e) {
        Thread.currentThread().interrupt();
      }
    }
    try {
      selector.close();
    } catch (IOException e) {
      LOG.debug("closing selector: {}", e.toString());
    }
  }
}
