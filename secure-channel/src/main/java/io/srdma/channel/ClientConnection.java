package io.srdma.channel;

import io.srdma.channel.protocol.Frame;
import io.srdma.channel.protocol.Side;
import io.srdma.channel.transport.EventLoop;
import io.srdma.channel.transport.TlsConnection;
import io.srdma.keys.KeyExchangeException;
import io.srdma.keys.MutualTls;
import java.io.EOFException;
import java.io.IOException;
import java.io.InterruptedIOException;
import java.io.OutputStream;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.SocketTimeoutException;
import java.net.StandardSocketOptions;
import java.net.UnknownHostException;
import java.nio.channels.SocketChannel;
import java.nio.channels.UnresolvedAddressException;
import java.time.Duration;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.locks.Condition;
import java.util.concurrent.locks.ReentrantLock;
import javax.net.ssl.SSLEngine;

/**
 * A client's control connection on the process's {@link ClientRuntime}: TLS 1.3 through a {@link
 * TlsConnection} on the shared event loop, with no thread of its own. While connecting, the
 * connecting thread waits (bounded) for the handshake and each frame; once the session is
 * established, every {@code kick} of the connection runs the owner's strand on a shared worker,
 * never two at once, until it found nothing more to do (as the host's sessions do). {@link #kick},
 * {@link #output} and {@link #close} are thread-safe; {@link #awaitHandshake} and {@link
 * #awaitFrame} belong to the connecting thread, {@link #nextFrame} to the strand.
 */
final class ClientConnection {
  private final ClientRuntime runtime;
  private final TlsConnection tls;
  private final AtomicLong kicks = new AtomicLong(); // every kick, for the connecting thread
  private final AtomicInteger strandKicks = new AtomicInteger(); // kicks the strand has not seen
  private final ReentrantLock lock = new ReentrantLock();
  private final Condition progress = lock.newCondition();
  private volatile Runnable strand; // null while connecting
  private final InetAddress remote;
  // the TLS handshake's delegated tasks (certificate checks, signatures), run by the connecting
  // thread while it waits in awaitHandshake: on a shared worker they could wait for ever behind
  // connects that wait for them (every worker in a session-lost listener that connects again)
  private final ConcurrentLinkedQueue<Runnable> handshakeTasks = new ConcurrentLinkedQueue<>();
  private volatile boolean awaitingHandshake = true;

  private ClientConnection(ClientRuntime runtime, SocketChannel channel, SSLEngine engine) {
    this.runtime = runtime;
    this.remote = channel.socket().getInetAddress();
    this.tls =
        new TlsConnection(runtime.loop(), channel, engine, Side.SERVER, this::task, this::kick);
  }

  /**
   * A delegated task of the engine: to the thread waiting in {@link #awaitHandshake}, else (after
   * it) to a shared worker.
   */
  private void task(Runnable t) {
    if (awaitingHandshake) {
      handshakeTasks.add(t);
      if (awaitingHandshake || !handshakeTasks.remove(t)) {
        lock.lock(); // the waiter runs it (or already took it when it stopped waiting)
        try {
          progress.signalAll();
        } finally {
          lock.unlock();
        }
        return;
      }
    }
    runtime.workers().execute(t);
  }

  private void runHandshakeTasks() {
    Runnable t;
    while ((t = handshakeTasks.poll()) != null) {
      t.run();
    }
  }

  /**
   * Connects (TCP within {@code timeout}) and starts the TLS handshake on the shared loop; wait for
   * it with {@link #awaitHandshake}.
   *
   * @throws KeyExchangeException as {@link MutualTls#connect} (the host refused or is unreachable)
   */
  static ClientConnection open(
      ClientRuntime runtime, MutualTls tls, InetSocketAddress address, Duration timeout) {
    SocketChannel ch = null;
    try {
      ch = SocketChannel.open();
      ch.setOption(StandardSocketOptions.TCP_NODELAY, true);
      // blocking for a bounded connect on the calling thread, then handed to the loop
      ch.socket().connect(address, millis(timeout));
      ch.configureBlocking(false);
      SSLEngine engine = tls.newEngine(address.getHostString(), address.getPort());
      ClientConnection c = new ClientConnection(runtime, ch, engine);
      EventLoop loop = runtime.loop();
      loop.execute(
          () -> {
            c.tls.register(loop.selector());
            c.tls.beginHandshake();
          });
      return c;
    } catch (IOException | UnresolvedAddressException e) {
      closeQuietly(ch);
      IOException cause =
          e instanceof IOException io ? io : new UnknownHostException(address.getHostString());
      throw MutualTls.failure(cause);
    } catch (RuntimeException e) {
      closeQuietly(ch);
      throw e;
    }
  }

  /** The host's address on this connection (the IP the TCP connection reached). */
  InetAddress remoteAddress() {
    return remote;
  }

  private static int millis(Duration d) {
    return (int) Math.max(1, Math.min(Integer.MAX_VALUE, d.toMillis()));
  }

  private static void closeQuietly(SocketChannel ch) {
    if (ch != null) {
      try {
        ch.close();
      } catch (IOException ignored) {
        // failing anyway
      }
    }
  }

  /**
   * Waits (connecting thread) until the TLS handshake finished, at most {@code timeout}; the peer
   * is not verified yet ({@link MutualTls#authenticated}). Closes the connection when it throws.
   *
   * @throws KeyExchangeException why the handshake failed ({@code HANDSHAKE_TIMEOUT} past the
   *     deadline)
   */
  void awaitHandshake(Duration timeout) {
    long deadline = System.nanoTime() + timeout.toNanos();
    try {
      while (true) {
        runHandshakeTasks(); // not under the lock: a task ends by kicking the loop
        lock.lock();
        try {
          if (tls.handshakeFinished() || tls.isClosed()) {
            break;
          }
          if (!handshakeTasks.isEmpty()) {
            continue;
          }
          long left = deadline - System.nanoTime();
          if (left <= 0) {
            tls.close();
            throw MutualTls.failure(new SocketTimeoutException("TLS handshake timed out"));
          }
          progress.awaitNanos(left);
        } finally {
          lock.unlock();
        }
      }
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      tls.close();
      throw MutualTls.failure(new InterruptedIOException("interrupted during the TLS handshake"));
    } finally {
      awaitingHandshake = false;
      runHandshakeTasks(); // came as the wait ended; later ones go to a worker
    }
    if (!tls.handshakeFinished()) {
      IOException f = tls.failure();
      throw MutualTls.failure(f != null ? f : new EOFException("the peer closed the connection"));
    }
  }

  /**
   * The next frame (connecting thread), waiting at most {@code timeout} for it.
   *
   * @throws SocketTimeoutException none came in time
   * @throws IOException the connection failed or the peer closed it
   */
  Frame awaitFrame(Duration timeout) throws IOException {
    long deadline = System.nanoTime() + timeout.toNanos();
    while (true) {
      long seen = kicks.get();
      Frame f = tls.nextFrame();
      if (f != null) {
        return f;
      }
      if (tls.isClosed()) {
        IOException failure = tls.failure();
        throw failure != null ? failure : new EOFException("the peer closed the connection");
      }
      lock.lock();
      try {
        while (kicks.get() == seen) {
          long left = deadline - System.nanoTime();
          if (left <= 0) {
            throw new SocketTimeoutException("no frame within " + timeout.toMillis() + " ms");
          }
          progress.awaitNanos(left);
        }
      } catch (InterruptedException e) {
        Thread.currentThread().interrupt();
        throw new InterruptedIOException("interrupted while waiting for the host");
      } finally {
        lock.unlock();
      }
    }
  }

  /** The engine (its session once the handshake finished). */
  SSLEngine engine() {
    return tls.engine();
  }

  /** The next whole frame or null (strand). */
  Frame nextFrame() throws IOException {
    return tls.nextFrame();
  }

  boolean isClosed() {
    return tls.isClosed();
  }

  /** Why the connection ended, or null. */
  IOException failure() {
    return tls.failure();
  }

  /** Frames are written here; thread-safe, bounded by the write timeout. */
  OutputStream output() {
    return tls.output();
  }

  /**
   * From now on each kick runs {@code body} on a shared worker, one run at a time; runs it once now
   * for what arrived meanwhile.
   */
  void startStrand(Runnable body) {
    strand = body;
    kick();
  }

  /** Something is ready (loop, workers, any thread); never blocks for long. */
  private void kick() {
    kicks.incrementAndGet();
    if (strand == null) {
      lock.lock();
      try {
        progress.signalAll();
      } finally {
        lock.unlock();
      }
      return;
    }
    if (strandKicks.getAndIncrement() != 0) {
      return; // the strand runs and will look again
    }
    if (!runtime.execute(this::drain)) {
      strandKicks.set(0); // the runtime stops: every client has closed
    }
  }

  private void drain() {
    int seen = strandKicks.get();
    while (true) {
      strand.run();
      if (strandKicks.compareAndSet(seen, 0)) {
        return;
      }
      seen = strandKicks.get();
    }
  }

  /** Says goodbye in TLS as far as the socket takes it now, and closes; never blocks. */
  void close() {
    tls.closeGracefully();
  }
}
