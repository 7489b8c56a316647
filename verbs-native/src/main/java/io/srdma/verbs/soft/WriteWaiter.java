package io.srdma.verbs.soft;

import java.io.IOException;
import java.nio.channels.CancelledKeyException;
import java.nio.channels.ClosedChannelException;
import java.nio.channels.ClosedSelectorException;
import java.nio.channels.SelectionKey;
import java.nio.channels.Selector;
import java.nio.channels.SocketChannel;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.locks.LockSupport;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Waits, for every requester of a device context, until a full socket takes more: one selector and
 * one thread per context (opened on first need), instead of a selector (two descriptors) per queue
 * pair.
 *
 * <p>Why a shared selector rather than a backoff retry loop: at large records the socket is full
 * nearly all the time, and the kernel reports it writable only once a good part of its buffer has
 * drained, so each wake-up moves a large chunk. A retry loop either spins (a core per writer, many
 * tiny writes) or sleeps past the moment the socket drained (throughput lost to the sleep); the
 * selector costs one thread hop per wake-up and nothing while nobody waits.
 *
 * <p>A waiter's key is registered once (interest 0) and armed per wait: {@link #await} sets the
 * interest to {@code OP_WRITE} and wakes the selector (since JDK 11 registering and changing
 * interest do not block on a select in progress, but take effect at the next one); the selector
 * thread disarms the key and unparks the waiting thread.
 *
 * <p>Thread safety: {@link #await} (one thread at a time per {@link Waiter}), {@link #closed} and
 * {@link #shutdown} from any thread; {@link #run} is the selector thread.
 */
final class WriteWaiter implements Runnable {
  private static final Logger LOG = LoggerFactory.getLogger(WriteWaiter.class);

  /** A thread blocked until its channel takes more bytes; one per requester, reused. */
  static final class Waiter {
    private volatile SelectionKey key; // set by the waiting thread (under the QP's send lock)
    private volatile Thread thread;
    private volatile boolean ready;
  }

  private final Selector selector;
  private final Thread thread;
  private volatile boolean stopped;

  WriteWaiter(String name) throws IOException {
    selector = Selector.open();
    thread = new Thread(this, name);
    thread.setDaemon(true);
  }

  void start() {
    thread.start();
  }

  /**
   * Blocks the caller until {@code channel} is writable, {@code timeoutNanos} pass, or the channel
   * or this waiter closes (the caller retries its write and finds out). One thread at a time per
   * {@code w}.
   */
  void await(SocketChannel channel, Waiter w, long timeoutNanos) throws IOException {
    if (stopped) {
      throw new ClosedChannelException();
    }
    SelectionKey key = w.key;
    try {
      if (key == null) {
        key = channel.register(selector, 0, w);
        w.key = key;
      }
      w.ready = false;
      w.thread = Thread.currentThread();
      key.interestOps(SelectionKey.OP_WRITE);
    } catch (ClosedSelectorException | CancelledKeyException e) {
      throw new ClosedChannelException(); // the QP or the device closed meanwhile
    }
    selector.wakeup();
    long until = System.nanoTime() + timeoutNanos;
    try {
      while (!w.ready && key.isValid() && !stopped) {
        long left = until - System.nanoTime();
        if (left <= 0 || Thread.currentThread().isInterrupted()) {
          return;
        }
        LockSupport.parkNanos(this, left);
      }
    } finally {
      w.thread = null;
    }
  }

  /**
   * After {@code w}'s channel was closed (which cancels its key): lets the selector deregister it
   * now, as the JDK frees a registered channel's descriptor only then.
   */
  void closed(Waiter w) {
    SelectionKey key = w.key;
    if (key != null) {
      key.cancel();
      selector.wakeup();
    }
    wake(w); // a thread waiting on it returns now and finds the channel closed
  }

  @Override
  public void run() {
    try {
      while (!stopped) {
        selector.select(WriteWaiter::writable, TimeUnit.SECONDS.toMillis(1));
      }
    } catch (IOException | ClosedSelectorException e) {
      if (!stopped) {
        LOG.error("soft write waiter {} failed: {}", thread.getName(), e.toString());
      }
    } finally {
      stopped = true;
      for (SelectionKey k : selector.keys()) {
        wake((Waiter) k.attachment());
      }
      try {
        selector.close();
      } catch (IOException e) {
        LOG.debug("closing the write waiter's selector: {}", e.toString());
      }
    }
  }

  private static void writable(SelectionKey key) {
    if (key.isValid()) {
      key.interestOps(0); // one-shot: armed again by the next wait
      wake((Waiter) key.attachment());
    }
  }

  private static void wake(Waiter w) {
    w.ready = true;
    Thread t = w.thread;
    if (t != null) {
      LockSupport.unpark(t);
    }
  }

  /** Stops the thread (bounded wait); waiting threads return and find their channel closed. */
  void shutdown() {
    stopped = true;
    selector.wakeup();
    try {
      thread.join(TimeUnit.SECONDS.toMillis(5));
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
    }
  }
}
