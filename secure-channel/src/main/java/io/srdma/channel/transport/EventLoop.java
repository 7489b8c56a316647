package io.srdma.channel.transport;

import java.io.IOException;
import java.nio.channels.SelectionKey;
import java.nio.channels.Selector;
import java.util.Queue;
import java.util.concurrent.ConcurrentLinkedQueue;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * An event-loop thread: a selector over many {@link TlsConnection}s (and whatever else registers a
 * {@link Ready} attachment, such as a listening socket), plus a queue of tasks other threads hand
 * it. Nothing on it blocks: TLS delegated tasks and frame handling run elsewhere. Not API.
 *
 * <p>Thread safety: {@link #start}, {@link #execute}, {@link #wakeup}, {@link #inLoop} and {@link
 * #close} are thread-safe; {@link #selector} is for registering on the loop's own thread. Buffers:
 * none.
 */
public final class EventLoop implements Runnable {
  private static final Logger LOG = LoggerFactory.getLogger(EventLoop.class);

  /** What a registered key's attachment does when its channel is ready. */
  public interface Ready {
    void onReady(SelectionKey key);
  }

  private final Selector selector;
  private final Thread thread;
  private final Queue<Runnable> tasks = new ConcurrentLinkedQueue<>();
  private volatile boolean running = true;

  /**
   * @param name the thread's name
   */
  public EventLoop(String name) throws IOException {
    this.selector = Selector.open();
    this.thread = new Thread(this, name);
    thread.setDaemon(true);
  }

  public Selector selector() {
    return selector;
  }

  public void start() {
    thread.start();
  }

  public boolean inLoop() {
    return Thread.currentThread() == thread;
  }

  /** Runs {@code task} on the loop's thread soon (at once when called on it, after the current). */
  public void execute(Runnable task) {
    tasks.add(task);
    if (!inLoop()) {
      selector.wakeup();
    }
  }

  public void wakeup() {
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
    if (a instanceof TlsConnection c) {
      c.onReady(key);
    } else if (a instanceof Ready r) {
      r.onReady(key);
    }
  }

  /** Stops the loop and closes its selector (waits at most 10 s for the thread). */
  public void close() {
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
