package io.srdma.host;

import java.io.IOException;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.ServerSocket;
import java.net.Socket;
import java.net.SocketException;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The host's acceptor thread ({@code srdma-host-<n>-acceptor}): takes each TCP connection, refuses
 * it when its address is rate-limited or has too many pending handshakes, else starts a {@link
 * HostSession} on a thread of its own ({@code srdma-host-<n>-session-<i>}). {@link #start} and
 * {@link #close} are thread-safe.
 */
final class SessionAcceptor {
  private static final Logger LOG = LoggerFactory.getLogger(SessionAcceptor.class);

  private final HostContext ctx;
  private final ServerSocket server;
  private final Thread thread;
  private volatile boolean closed;

  SessionAcceptor(HostContext ctx, ServerSocket server) {
    this.ctx = ctx;
    this.server = server;
    this.thread = new Thread(this::accept, ctx.name() + "-acceptor");
    thread.setDaemon(true);
  }

  /**
   * A plain TCP listener: TLS is layered over each connection only after its first byte arrived
   * (see {@link FirstRecordGate}), so an idle connection costs a short deadline, not a handshake.
   */
  static ServerSocket listen(InetSocketAddress address) throws IOException {
    ServerSocket s = new ServerSocket();
    try {
      s.setReuseAddress(true);
      s.bind(address, 128);
      return s;
    } catch (IOException | RuntimeException e) {
      s.close();
      throw e;
    }
  }

  InetSocketAddress address() {
    return (InetSocketAddress) server.getLocalSocketAddress();
  }

  void start() {
    thread.start();
  }

  /** Closes the listener and waits (bounded) for the thread. */
  void close() {
    closed = true;
    try {
      server.close();
    } catch (IOException e) {
      LOG.debug("closing listener: {}", e.getMessage());
    }
    try {
      thread.join(10_000);
      if (thread.isAlive()) {
        LOG.warn("{} did not stop within 10 s", thread.getName());
      }
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
    }
  }

  private void accept() {
    int n = 0;
    while (!closed) {
      Socket socket;
      try {
        socket = server.accept();
      } catch (SocketException e) {
        return;
      } catch (IOException e) {
        if (!closed) {
          LOG.warn("{}: accept failed: {}", ctx.name(), e.getMessage());
        }
        continue;
      }
      InetAddress from = socket.getInetAddress();
      if (ctx.limiter().blocked(from) || !ctx.handshakes().tryAcquire(from)) {
        ctx.counters().rateLimited.increment();
        closeQuietly(socket);
        continue;
      }
      HostSession session = new HostSession(ctx, socket);
      Thread t = new Thread(session, ctx.name() + "-session-" + ++n);
      t.setDaemon(true);
      ctx.tables().sessions.put(session, t);
      t.start();
    }
  }

  private static void closeQuietly(Socket socket) {
    try {
      socket.close();
    } catch (IOException ignored) {
      // refused anyway
    }
  }
}
