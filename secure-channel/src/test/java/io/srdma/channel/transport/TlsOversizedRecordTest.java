package io.srdma.channel.transport;

import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.srdma.channel.protocol.Side;
import io.srdma.keys.DeploymentCa;
import io.srdma.keys.MutualTls;
import io.srdma.keys.PeerIdentity;
import java.io.OutputStream;
import java.lang.management.ManagementFactory;
import java.lang.management.ThreadMXBean;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.Socket;
import java.nio.ByteBuffer;
import java.nio.channels.ServerSocketChannel;
import java.nio.channels.SocketChannel;
import java.nio.file.Path;
import java.time.Duration;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import javax.net.ssl.SSLContext;
import javax.net.ssl.SSLEngine;
import javax.net.ssl.SSLProtocolException;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

/**
 * A record header claiming more than TLS 1.3 allows (16,640 bytes after the header) but less than
 * the JDK's engine refuses (it grows its limits up to ~33 KB and waits for the rest), followed by
 * enough bytes to fill the connection's buffer: before any certificate is shown. The engine then
 * waits for bytes that can never fit, the socket stays readable, and the event loop spun on it
 * until the handshake deadline (~2 s of CPU in 3 s; two such connections pinned both of a host's
 * loops). The connection now fails at once, and the loop stays idle. Before the handshake finished
 * the connection's handshake bound ({@link TlsConnection#MAX_HANDSHAKE_BYTES}) now ends such a peer
 * first; the record check is tested after a handshake too.
 */
@Timeout(60)
class TlsOversizedRecordTest {
  private EventLoop loop;
  private ExecutorService tasks;
  private ServerSocketChannel listener;
  private Socket peer;
  private TlsConnection connection;

  @BeforeEach
  void setUp() throws Exception {
    loop = new EventLoop("tls-oversized-test");
    loop.start();
    tasks = Executors.newSingleThreadExecutor();
    listener = ServerSocketChannel.open();
    listener.bind(new InetSocketAddress(InetAddress.getLoopbackAddress(), 0));
  }

  @AfterEach
  void tearDown() throws Exception {
    if (connection != null) {
      connection.close();
    }
    if (peer != null) {
      peer.close();
    }
    listener.close();
    loop.close();
    tasks.shutdownNow();
  }

  /** A host-side connection that has received a record header claiming {@code claimed} bytes. */
  private TlsConnection receive(int claimed, int sent) throws Exception {
    peer = new Socket(InetAddress.getLoopbackAddress(), listener.socket().getLocalPort());
    SocketChannel ch = listener.accept();
    ch.configureBlocking(false);
    SSLContext ctx = SSLContext.getInstance("TLSv1.3");
    ctx.init(null, null, null);
    SSLEngine engine = ctx.createSSLEngine();
    engine.setUseClientMode(false);
    TlsConnection c = new TlsConnection(loop, ch, engine, Side.CLIENT, tasks, () -> {});
    loop.execute(() -> c.register(loop.selector()));
    byte[] record = new byte[5 + sent];
    record[0] = 22; // handshake
    record[1] = 3;
    record[2] = 1;
    record[3] = (byte) (claimed >> 8);
    record[4] = (byte) claimed;
    OutputStream out = peer.getOutputStream();
    out.write(record);
    out.flush();
    return c;
  }

  private long loopCpuNanos() {
    ThreadMXBean mx = ManagementFactory.getThreadMXBean();
    for (Thread t : Thread.getAllStackTraces().keySet()) {
      if (t.getName().equals("tls-oversized-test")) {
        return mx.getThreadCpuTime(t.getId());
      }
    }
    throw new IllegalStateException("no loop thread");
  }

  @Test
  void shouldFailARecordLongerThanTls13AllowsInsteadOfSpinning() throws Exception {
    connection = receive(17_000, 17_000);
    long deadline = System.nanoTime() + 2_000_000_000L;
    while (!connection.isClosed() && System.nanoTime() < deadline) {
      Thread.sleep(10);
    }
    assertTrue(connection.isClosed(), "closed, not waiting for bytes that cannot fit");
    assertNotNull(connection.failure());
    assertTrue(
        connection.failure() instanceof SSLProtocolException, connection.failure().toString());
    long cpu = loopCpuNanos();
    Thread.sleep(1000);
    long spent = loopCpuNanos() - cpu;
    assertTrue(spent < 200_000_000L, "the loop idles: " + spent / 1_000_000 + " ms of CPU in 1 s");
  }

  @Test
  void shouldFailAnOversizedRecordAfterTheHandshake(@TempDir Path dir) throws Exception {
    // before the handshake finished the handshake bound (MAX_HANDSHAKE_BYTES, below one full
    // buffer) trips first; after it, only the record check stands between the loop and a spin
    DeploymentCa ca = DeploymentCa.init(dir.resolve("ca"), null);
    MutualTls server =
        MutualTls.server(ca.issuePeer(PeerIdentity.host("host-1"), Duration.ofDays(1)), ca.trust());
    MutualTls client =
        MutualTls.client(
            ca.issuePeer(PeerIdentity.of("acme", "trainer"), Duration.ofDays(1)), ca.trust());
    SocketChannel c = SocketChannel.open(listener.getLocalAddress());
    SocketChannel s = listener.accept();
    c.configureBlocking(false);
    s.configureBlocking(false);
    int port = listener.socket().getLocalPort();
    connection =
        new TlsConnection(
            loop, s, server.newEngine("127.0.0.1", port), Side.CLIENT, tasks, () -> {});
    TlsConnection host = connection;
    TlsConnection peer =
        new TlsConnection(
            loop, c, client.newEngine("127.0.0.1", port), Side.SERVER, tasks, () -> {});
    try {
      loop.execute(
          () -> {
            host.register(loop.selector());
            peer.register(loop.selector());
            peer.beginHandshake();
          });
      long deadline = System.nanoTime() + 10_000_000_000L;
      while (!(host.handshakeFinished() && peer.handshakeFinished())
          && System.nanoTime() < deadline) {
        Thread.sleep(5);
      }
      assertTrue(host.handshakeFinished() && peer.handshakeFinished(), "handshake");
      byte[] record = new byte[5 + 17_000];
      record[0] = 23; // application data
      record[1] = 3;
      record[2] = 3;
      record[3] = (byte) (17_000 >> 8);
      record[4] = (byte) 17_000;
      ByteBuffer raw = ByteBuffer.wrap(record); // under the peer's TLS, on its socket
      while (raw.hasRemaining() && System.nanoTime() < deadline) {
        c.write(raw);
      }
      while (!host.isClosed() && System.nanoTime() < deadline) {
        Thread.sleep(10);
      }
      assertTrue(host.isClosed(), "closed, not waiting for bytes that cannot fit");
      assertTrue(
          host.failure().getMessage().contains("TLS record longer than"),
          host.failure().toString());
    } finally {
      peer.close();
    }
  }

  @Test
  void shouldWaitQuietlyForTheRestOfAnHonestPartialRecord() throws Exception {
    connection = receive(100, 50);
    Thread.sleep(300);
    long cpu = loopCpuNanos();
    Thread.sleep(1000);
    long spent = loopCpuNanos() - cpu;
    assertFalse(connection.isClosed(), "a partial record is waited for");
    assertNull(connection.failure());
    assertTrue(spent < 200_000_000L, "the loop idles: " + spent / 1_000_000 + " ms of CPU in 1 s");
  }
}
