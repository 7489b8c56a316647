package io.srdma.keys;

import java.io.IOException;
import java.io.OutputStream;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.concurrent.BlockingQueue;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.TimeUnit;
import java.util.function.Consumer;
import javax.net.ssl.SSLServerSocket;
import javax.net.ssl.SSLSocket;

/**
 * A loopback listener built from {@link MutualTls}: each accepted connection is handshaken, its
 * outcome (an {@link AuthenticatedPeer} or a {@link KeyExchangeException}) queued, and on success
 * {@code afterHandshake} runs before the connection is closed.
 */
final class TestTlsServer implements AutoCloseable {
  static final String GREETING = "srdma-ok";

  private final SSLServerSocket listener;
  private final Thread thread;
  private final BlockingQueue<Object> outcomes = new LinkedBlockingQueue<>();

  TestTlsServer(MutualTls tls, Consumer<AuthenticatedPeer> afterHandshake) {
    listener = tls.bind(new InetSocketAddress(InetAddress.getLoopbackAddress(), 0), 16);
    thread =
        new Thread(
            () -> {
              while (!listener.isClosed()) {
                try (SSLSocket s = (SSLSocket) listener.accept()) {
                  try {
                    AuthenticatedPeer peer = tls.handshake(s, Duration.ofSeconds(10));
                    afterHandshake.accept(peer);
                    outcomes.add(peer);
                  } catch (KeyExchangeException e) {
                    outcomes.add(e);
                  }
                } catch (IOException e) {
                  if (!listener.isClosed()) {
                    outcomes.add(e);
                  }
                }
              }
            },
            "test-tls-server");
    thread.setDaemon(true);
    thread.start();
  }

  /** A server that greets each authenticated peer with {@link #GREETING} and hangs up. */
  static TestTlsServer greeting(MutualTls tls) {
    return new TestTlsServer(
        tls,
        peer -> {
          try {
            OutputStream out = peer.socket().getOutputStream();
            out.write((GREETING + "\n").getBytes(StandardCharsets.US_ASCII));
            out.flush();
          } catch (IOException e) {
            throw new IllegalStateException(e);
          }
        });
  }

  int port() {
    return listener.getLocalPort();
  }

  InetSocketAddress address() {
    return new InetSocketAddress(InetAddress.getLoopbackAddress(), port());
  }

  /** The outcome of the next connection, waiting at most 20 s. */
  Object nextOutcome() throws InterruptedException {
    Object o = outcomes.poll(20, TimeUnit.SECONDS);
    if (o == null) {
      throw new AssertionError("the server saw no connection within 20 s");
    }
    return o;
  }

  @Override
  public void close() throws IOException {
    listener.close();
    try {
      thread.join(5_000);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
    }
  }
}
