package io.srdma.channel.transport;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.srdma.channel.protocol.Side;
import io.srdma.keys.Credential;
import io.srdma.keys.DeploymentCa;
import io.srdma.keys.KeyExchangeException;
import io.srdma.keys.MutualTls;
import io.srdma.keys.PeerIdentity;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.Socket;
import java.nio.channels.ServerSocketChannel;
import java.nio.channels.SocketChannel;
import java.nio.file.Path;
import java.security.KeyStore;
import java.security.cert.Certificate;
import java.security.cert.X509Certificate;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.BooleanSupplier;
import java.util.function.Supplier;
import javax.net.ssl.KeyManagerFactory;
import javax.net.ssl.SSLContext;
import javax.net.ssl.SSLEngine;
import javax.net.ssl.TrustManager;
import javax.net.ssl.X509ExtendedTrustManager;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

/**
 * An error thrown inside one of the engine's delegated tasks (the certificate checks: a peer's
 * certificate nested deep enough overflowed the stack there) escapes the engine, which reports only
 * exceptions. The connection then waited with its tasks "pending" until the owner's deadline, which
 * the host takes for its own slowness and does not count against the peer's address; the worker
 * died. Now the connection fails at once with a typed handshake error; after a stack overflow the
 * worker goes on, any other error still reaches the worker's owner. Here the server's trust manager
 * throws the error, as the parser did.
 */
@Timeout(60)
class TlsHandshakeTaskErrorTest {
  @TempDir Path dir;

  private DeploymentCa ca;
  private MutualTls client;
  private EventLoop loop;
  private ExecutorService hostTasks;
  private ExecutorService peerTasks;
  private ServerSocketChannel listener;
  private TlsConnection host;
  private TlsConnection peer;
  private final AtomicInteger hostThreads = new AtomicInteger();
  private final List<Throwable> uncaught = new CopyOnWriteArrayList<>();

  @BeforeEach
  void setUp() throws Exception {
    ca = DeploymentCa.init(dir.resolve("ca"), null);
    client =
        MutualTls.client(
            ca.issuePeer(PeerIdentity.of("acme", "trainer"), Duration.ofDays(1)), ca.trust());
    loop = new EventLoop("tls-task-error-test");
    loop.start();
    hostTasks =
        Executors.newSingleThreadExecutor(
            r -> {
              Thread t = new Thread(r, "host-task-" + hostThreads.incrementAndGet());
              t.setDaemon(true);
              t.setUncaughtExceptionHandler((th, e) -> uncaught.add(e));
              return t;
            });
    peerTasks = Executors.newSingleThreadExecutor();
    listener = ServerSocketChannel.open();
    listener.bind(new InetSocketAddress(InetAddress.getLoopbackAddress(), 0));
  }

  @AfterEach
  void tearDown() throws Exception {
    for (TlsConnection c : new TlsConnection[] {host, peer}) {
      if (c != null) {
        c.close();
      }
    }
    listener.close();
    loop.close();
    hostTasks.shutdownNow();
    peerTasks.shutdownNow();
  }

  /** A server engine of the host's credential whose client-certificate check throws. */
  private SSLEngine throwingServer(Supplier<Error> error) throws Exception {
    Credential cred = ca.issuePeer(PeerIdentity.host("host-1"), Duration.ofDays(1));
    KeyStore ks = KeyStore.getInstance("PKCS12");
    ks.load(null, null);
    char[] pw = "test".toCharArray();
    ks.setKeyEntry(
        "host",
        cred.privateKey(),
        pw,
        new Certificate[] {cred.certificate(), ca.trust().caCertificate()});
    KeyManagerFactory kmf = KeyManagerFactory.getInstance("PKIX");
    kmf.init(ks, pw);
    SSLContext ctx = SSLContext.getInstance("TLSv1.3");
    ctx.init(kmf.getKeyManagers(), new TrustManager[] {new Throwing(error)}, null);
    SSLEngine e = ctx.createSSLEngine();
    e.setUseClientMode(false);
    e.setNeedClientAuth(true);
    e.setEnabledProtocols(new String[] {"TLSv1.3"});
    return e;
  }

  private void handshake(Supplier<Error> error) throws Exception {
    SocketChannel c = SocketChannel.open(listener.getLocalAddress());
    SocketChannel s = listener.accept();
    c.configureBlocking(false);
    s.configureBlocking(false);
    int port = ((InetSocketAddress) listener.getLocalAddress()).getPort();
    host = new TlsConnection(loop, s, throwingServer(error), Side.CLIENT, hostTasks, () -> {});
    peer =
        new TlsConnection(
            loop, c, client.newEngine("127.0.0.1", port), Side.SERVER, peerTasks, () -> {});
    TlsConnection h = host;
    TlsConnection p = peer;
    loop.execute(
        () -> {
          h.register(loop.selector());
          p.register(loop.selector());
          p.beginHandshake();
        });
  }

  private static void await(BooleanSupplier condition, String what) throws InterruptedException {
    long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(20);
    while (!condition.getAsBoolean()) {
      assertTrue(System.nanoTime() < deadline, "not within 20 s: " + what);
      Thread.sleep(2);
    }
  }

  private void assertFailedAtOnce() throws InterruptedException {
    await(() -> host.isClosed(), "the connection fails, not waits with its tasks pending");
    assertTrue(!host.tasksPending(), "no task pending any more");
    assertTrue(
        host.failure().getMessage().contains("TLS handshake task failed"),
        host.failure().toString());
    assertEquals(
        KeyExchangeException.Reason.HANDSHAKE_FAILED, MutualTls.failure(host.failure()).reason());
  }

  @Test
  void shouldFailTheConnectionAndKeepTheWorkerWhenATaskOverflowsTheStack() throws Exception {
    handshake(() -> new StackOverflowError());
    assertFailedAtOnce();
    assertTrue(uncaught.isEmpty(), "the worker did not die: " + uncaught);
    hostTasks.submit(() -> {}).get(10, TimeUnit.SECONDS);
    assertEquals(1, hostThreads.get(), "the same worker goes on");
  }

  @Test
  void shouldFailTheConnectionAndRethrowAnyOtherError() throws Exception {
    handshake(() -> new InternalError("simulated"));
    assertFailedAtOnce();
    await(() -> !uncaught.isEmpty(), "the error reached the worker's owner");
    assertTrue(uncaught.get(0) instanceof InternalError, uncaught.toString());
  }

  /** Throws {@code error} wherever a client certificate is checked. */
  private static final class Throwing extends X509ExtendedTrustManager {
    private final Supplier<Error> error;

    Throwing(Supplier<Error> error) {
      this.error = error;
    }

    @Override
    public void checkClientTrusted(X509Certificate[] chain, String authType, Socket socket) {
      throw error.get();
    }

    @Override
    public void checkClientTrusted(X509Certificate[] chain, String authType, SSLEngine engine) {
      throw error.get();
    }

    @Override
    public void checkClientTrusted(X509Certificate[] chain, String authType) {
      throw error.get();
    }

    @Override
    public void checkServerTrusted(X509Certificate[] chain, String authType, Socket socket) {}

    @Override
    public void checkServerTrusted(X509Certificate[] chain, String authType, SSLEngine engine) {}

    @Override
    public void checkServerTrusted(X509Certificate[] chain, String authType) {}

    @Override
    public X509Certificate[] getAcceptedIssuers() {
      return new X509Certificate[0];
    }
  }
}
