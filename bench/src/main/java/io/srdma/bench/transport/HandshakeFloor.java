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
 * after its side of the handshake completed, so both sides' work is in it.
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
    MutualTls server = MutualTls.server(host, trust);
    MutualTls connector = MutualTls.client(client, trust, hostIdentity);
    AtomicInteger n = new AtomicInteger();
    ExecutorService pool =
        Executors.newFixedThreadPool(
            2 * parallel + 1,
            r -> {
              Thread t = new Thread(r, LoadRun.BENCH_THREAD + "floor-" + n.incrementAndGet());
              t.setDaemon(true);
              return t;
            });
    try (SSLServerSocket listener =
        server.bind(new InetSocketAddress(InetAddress.getLoopbackAddress(), 0), 128)) {
      InetSocketAddress address = (InetSocketAddress) listener.getLocalSocketAddress();
      Future<?> acceptor = pool.submit(() -> accept(listener, server, pool, timeout));
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
      acceptor.cancel(true);
      return handshakes / Math.max(1e-9, nanos / 1e9);
    } finally {
      pool.shutdownNow();
      pool.awaitTermination(10, TimeUnit.SECONDS);
    }
  }

  private static Void accept(
      SSLServerSocket listener, MutualTls server, ExecutorService pool, Duration timeout) {
    while (!Thread.currentThread().isInterrupted()) {
      SSLSocket s;
      try {
        s = (SSLSocket) listener.accept();
      } catch (SocketException e) {
        return null; // closed at the end
      } catch (IOException e) {
        continue;
      }
      pool.execute(
          () -> {
            try (Socket done = server.handshake(s, timeout).socket();
                OutputStream out = done.getOutputStream()) {
              out.write(1);
              out.flush();
            } catch (IOException | RuntimeException e) {
              try {
                s.close();
              } catch (IOException ignored) {
                // closing after a failure
              }
            }
          });
    }
    return null;
  }
}
