package io.srdma.bench.transport;

import io.srdma.keys.AuthenticatedPeer;
import io.srdma.keys.Credential;
import io.srdma.keys.DeploymentTrust;
import io.srdma.keys.MutualTls;
import io.srdma.keys.PeerIdentity;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.Socket;
import java.net.SocketException;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import javax.net.ssl.SSLServerSocket;
import javax.net.ssl.SSLSocket;

/**
 * The floor of a {@link LoadRun}'s session set-up rate: bare JDK mutual TLS 1.3 handshakes ({@link
 * MutualTls}, the project's settings: no session tickets, so every handshake is full) on loopback
 * with fresh connections, the load's host and client certificates, as many connecting at once as
 * the load connects sessions. A handshake counts when the client has read one byte the server wrote
 * after its side of the handshake completed, so both sides' work is in it. The server side ({@link
 * Server}) runs where the load's host runs: in the same process as the clients, or in the host's
 * process with {@code --host-process} ({@link LoadHostMain}), so floor and sessions cross the same
 * process boundary.
 */
final class HandshakeFloor {
  private HandshakeFloor() {}

  /** Handshakes per second over {@code handshakes} connections, {@code parallel} at a time. */
  static double measure(
      Credential host,
      Credential client,
      DeploymentTrust trust,
      PeerIdentity hostIdentity,
      int handshakes,
      int parallel,
      Duration timeout)
      throws Exception {
    try (Server server = Server.start(host, trust, parallel, timeout)) {
      return connect(client, trust, hostIdentity, server.address(), handshakes, parallel, timeout);
    }
  }

  /**
   * The client side: {@code handshakes} connections to {@code address}, {@code parallel} at once.
   */
  static double connect(
      Credential client,
      DeploymentTrust trust,
      PeerIdentity hostIdentity,
      InetSocketAddress address,
      int handshakes,
      int parallel,
      Duration timeout)
      throws Exception {
    MutualTls connector = MutualTls.client(client, trust, hostIdentity);
    ExecutorService pool = pool(parallel, "floor-");
    try {
      AtomicInteger left = new AtomicInteger(handshakes);
      long start = System.nanoTime();
      List<Future<?>> clients = new ArrayList<>();
      for (int i = 0; i < parallel; i++) {
        clients.add(
            pool.submit(
                () -> {
                  while (left.getAndDecrement() > 0) {
                    AuthenticatedPeer p = connector.connect(address, timeout);
                    try (Socket s = p.socket();
                        InputStream in = s.getInputStream()) {
                      if (in.read() < 0) {
                        throw new IOException("the floor's server closed before its byte");
                      }
                    }
                  }
                  return null;
                }));
      }
      for (Future<?> f : clients) {
        f.get(timeout.toMillis() * Math.max(1, handshakes / parallel), TimeUnit.MILLISECONDS);
      }
      long nanos = System.nanoTime() - start;
      return handshakes / Math.max(1e-9, nanos / 1e9);
    } finally {
      pool.shutdownNow();
      pool.awaitTermination(10, TimeUnit.SECONDS);
    }
  }

  private static ExecutorService pool(int threads, String name) {
    AtomicInteger n = new AtomicInteger();
    return Executors.newFixedThreadPool(
        threads,
        r -> {
          Thread t = new Thread(r, LoadRun.BENCH_THREAD + name + n.incrementAndGet());
          t.setDaemon(true);
          return t;
        });
  }

  /** The server side: a loopback listener answering each handshake with one byte. */
  static final class Server implements AutoCloseable {
    private final SSLServerSocket listener;
    private final ExecutorService pool;

    private Server(SSLServerSocket listener, ExecutorService pool) {
      this.listener = listener;
      this.pool = pool;
    }

    /** Listens on an ephemeral loopback port; {@code parallel} handshakes at once. */
    static Server start(Credential host, DeploymentTrust trust, int parallel, Duration timeout)
        throws IOException {
      MutualTls server = MutualTls.server(host, trust);
      SSLServerSocket listener =
          server.bind(new InetSocketAddress(InetAddress.getLoopbackAddress(), 0), 128);
      ExecutorService pool = pool(parallel + 1, "floor-server-");
      Server s = new Server(listener, pool);
      pool.execute(() -> accept(listener, server, pool, timeout));
      return s;
    }

    InetSocketAddress address() {
      return (InetSocketAddress) listener.getLocalSocketAddress();
    }

    @Override
    public void close() throws IOException, InterruptedException {
      try {
        listener.close();
      } finally {
        pool.shutdownNow();
        pool.awaitTermination(10, TimeUnit.SECONDS);
      }
    }

    private static void accept(
        SSLServerSocket listener, MutualTls server, ExecutorService pool, Duration timeout) {
      while (!Thread.currentThread().isInterrupted()) {
        SSLSocket s;
        try {
          s = (SSLSocket) listener.accept();
        } catch (SocketException e) {
          return; // closed at the end
        } catch (IOException e) {
          continue;
        }
        try {
          pool.execute(() -> answer(s, server, timeout));
        } catch (java.util.concurrent.RejectedExecutionException e) {
          closeQuietly(s);
          return;
        }
      }
    }

    private static void answer(SSLSocket s, MutualTls server, Duration timeout) {
      try (Socket done = server.handshake(s, timeout).socket();
          OutputStream out = done.getOutputStream()) {
        out.write(1);
        out.flush();
      } catch (IOException | RuntimeException e) {
        closeQuietly(s);
      }
    }

    private static void closeQuietly(Socket s) {
      try {
        s.close();
      } catch (IOException ignored) {
        // closing after a failure
      }
    }
  }
}
