package io.srdma.host;

import io.srdma.channel.transport.EventLoop;
import java.io.IOException;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.StandardSocketOptions;
import java.nio.channels.ClosedChannelException;
import java.nio.channels.SelectionKey;
import java.nio.channels.ServerSocketChannel;
import java.nio.channels.SocketChannel;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Takes the host's TCP connections on its first {@link EventLoop}: refuses a connection at once
 * when its address is rate-limited or has too many pending handshakes, else makes its {@link
 * HostSession} and hands the connection to a loop, round-robin. No thread of its own, none per
 * session. {@link #start} and {@link #close} are thread-safe.
 */
final class SessionAcceptor implements EventLoop.Ready {
  private static final Logger LOG = LoggerFactory.getLogger(SessionAcceptor.class);
  private static final int BACKLOG = 128;

  private final HostContext ctx;
  private final ServerSocketChannel server;
  private final EventLoop[] loops;
  private int next; // loop 0's thread
  private long acceptFailures;

  SessionAcceptor(HostContext ctx, ServerSocketChannel server, EventLoop[] loops) {
    this.ctx = ctx;
    this.server = server;
    this.loops = loops.clone();
  }

  /**
   * A plain TCP listener: TLS starts on each connection only once its first byte arrived, so an
   * idle connection costs a short deadline, not a handshake.
   */
  static ServerSocketChannel listen(InetSocketAddress address) throws IOException {
    ServerSocketChannel s = ServerSocketChannel.open();
    try {
      s.setOption(StandardSocketOptions.SO_REUSEADDR, true);
      s.bind(address, BACKLOG);
      s.configureBlocking(false);
      return s;
    } catch (IOException | RuntimeException e) {
      s.close();
      throw e;
    }
  }

  InetSocketAddress address() {
    try {
      return (InetSocketAddress) server.getLocalAddress();
    } catch (IOException e) {
      throw new IllegalStateException("listener closed", e);
    }
  }

  void start() {
    EventLoop first = loops[0];
    first.execute(
        () -> {
          try {
            server.register(first.selector(), SelectionKey.OP_ACCEPT, this);
          } catch (ClosedChannelException e) {
            LOG.debug("{}: listener closed before it was registered", ctx.name());
          }
        });
  }

  /** Closes the listener; connections already taken go on. */
  void close() {
    try {
      server.close();
    } catch (IOException e) {
      LOG.debug("closing listener: {}", e.getMessage());
    }
    loops[0].wakeup();
  }

  @Override
  public void onReady(SelectionKey key) {
    // a bounded batch per wake-up, so the loop's connections are served between bursts
    for (int i = 0; i < 64 && key.isValid(); i++) {
      SocketChannel ch;
      try {
        ch = server.accept();
      } catch (ClosedChannelException e) {
        return;
      } catch (IOException e) {
        if (acceptFailures++ % 1000 == 0) {
          LOG.warn("{}: accept failed ({} so far): {}", ctx.name(), acceptFailures, e.getMessage());
        }
        return;
      }
      if (ch == null) {
        return;
      }
      admit(ch);
    }
  }

  private void admit(SocketChannel ch) {
    try {
      InetAddress from = ((InetSocketAddress) ch.getRemoteAddress()).getAddress();
      if (ctx.limiter().blocked(from) || !ctx.handshakes().tryAcquire(from)) {
        ctx.counters().rateLimited.increment();
        ch.close();
        return;
      }
      ch.configureBlocking(false);
      ch.setOption(StandardSocketOptions.TCP_NODELAY, true);
      EventLoop loop = loops[next];
      next = (next + 1) % loops.length;
      HostSession session;
      try {
        session = new HostSession(ctx, ch, from, loop);
      } catch (RuntimeException e) {
        ctx.handshakes().release(from);
        throw e;
      }
      ctx.tables().sessions.put(session, session);
      loop.execute(() -> session.connection().register(loop.selector()));
    } catch (IOException | RuntimeException e) {
      LOG.debug("{}: dropping a connection at accept: {}", ctx.name(), e.toString());
      try {
        ch.close();
      } catch (IOException ignored) {
        // dropped anyway
      }
    }
  }
}
