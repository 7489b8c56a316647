package io.srdma.bench.keys;

import io.srdma.keys.AuthenticatedPeer;
import io.srdma.keys.Credential;
import io.srdma.keys.DeploymentCa;
import io.srdma.keys.KeySchedule;
import io.srdma.keys.MutualTls;
import io.srdma.keys.PeerIdentity;
import io.srdma.keys.Role;
import java.io.IOException;
import java.io.InputStream;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.ServerSocket;
import java.nio.file.Files;
import java.nio.file.Path;
import java.security.GeneralSecurityException;
import java.security.KeyStore;
import java.security.SecureRandom;
import java.security.cert.Certificate;
import java.time.Duration;
import java.util.Comparator;
import java.util.concurrent.TimeUnit;
import java.util.stream.Stream;
import javax.net.ssl.KeyManagerFactory;
import javax.net.ssl.SSLContext;
import javax.net.ssl.SSLServerSocket;
import javax.net.ssl.SSLSocket;
import javax.net.ssl.TrustManagerFactory;
import org.openjdk.jmh.annotations.Benchmark;
import org.openjdk.jmh.annotations.BenchmarkMode;
import org.openjdk.jmh.annotations.Fork;
import org.openjdk.jmh.annotations.Measurement;
import org.openjdk.jmh.annotations.Mode;
import org.openjdk.jmh.annotations.OutputTimeUnit;
import org.openjdk.jmh.annotations.Scope;
import org.openjdk.jmh.annotations.Setup;
import org.openjdk.jmh.annotations.State;
import org.openjdk.jmh.annotations.TearDown;
import org.openjdk.jmh.annotations.Warmup;

/**
 * A full mutual-TLS 1.3 connection on loopback, client side, until the server has authenticated the
 * client, with the same P-256 certificates of one deployment CA in every variant:
 *
 * <ul>
 *   <li>{@link #jdkMutualTls13} — the baseline: the JDK's own TLS (SunJSSE), TLS 1.3, client
 *       certificate required, the server sends one byte once it accepted the client;
 *   <li>{@link #srdmaMutualTls13} — our {@link MutualTls} contexts (the same JDK TLS with our trust
 *       manager: deployment CA only, CRL check, usage and identity), same one byte;
 *   <li>{@link #srdmaMutualTls13WithKeyNegotiation} — our contexts plus the session key
 *       negotiation: X25519 both ways, the schedule, and key confirmation both ways.
 * </ul>
 *
 * Each server runs on its own named thread and serves connections one after another. Every socket
 * has TCP_NODELAY, as {@link MutualTls} sets it (without it, Nagle's algorithm and delayed ACKs add
 * about 40 ms to every variant on Linux loopback).
 */
@BenchmarkMode(Mode.SampleTime)
@OutputTimeUnit(TimeUnit.MICROSECONDS)
@Warmup(iterations = 3, time = 3)
@Measurement(iterations = 5, time = 4)
@Fork(1)
@State(Scope.Benchmark)
public class HandshakeBenchmark {
  private static final Duration TIMEOUT = Duration.ofSeconds(10);

  private Path dir;
  private final SecureRandom random = new SecureRandom();
  private MutualTls srdmaClient;
  private SSLContext jdkClient;
  private Server srdmaPlain;
  private Server srdmaNegotiating;
  private Server jdkPlain;

  /** Creates the CA, the certificates and the three servers. */
  @Setup
  public void setUp() throws Exception {
    dir = Files.createTempDirectory("srdma-bench-keys");
    DeploymentCa ca = DeploymentCa.init(dir.resolve("ca"), null);
    Credential server = ca.issueHost("bench-server", Duration.ofDays(1));
    Credential client = ca.issuePeer(PeerIdentity.of("bench", "client"), Duration.ofDays(1));

    MutualTls srdmaServer = MutualTls.server(server, ca.trust());
    srdmaClient = MutualTls.client(client, ca.trust(), PeerIdentity.host("bench-server"));
    srdmaPlain =
        new Server(
            "bench-srdma-tls",
            srdmaServer.bind(loopback(), 64),
            s -> {
              srdmaServer.handshake(s, TIMEOUT);
              s.getOutputStream().write(1);
              s.getOutputStream().flush();
            });
    srdmaNegotiating =
        new Server(
            "bench-srdma-keys",
            srdmaServer.bind(loopback(), 64),
            s -> {
              AuthenticatedPeer p = srdmaServer.handshake(s, TIMEOUT);
              KeyNegotiation.run(p, Role.RESPONDER, random, 0x222222).close();
            });

    SSLContext jdkServer = jdkContext(server, ca);
    jdkClient = jdkContext(client, ca);
    SSLServerSocket jdkListener =
        (SSLServerSocket) jdkServer.getServerSocketFactory().createServerSocket();
    jdkListener.setNeedClientAuth(true);
    jdkListener.setEnabledProtocols(new String[] {"TLSv1.3"});
    jdkListener.bind(loopback(), 64);
    jdkPlain =
        new Server(
            "bench-jdk-tls",
            jdkListener,
            s -> {
              s.startHandshake();
              s.getOutputStream().write(1);
              s.getOutputStream().flush();
            });
  }

  private static InetSocketAddress loopback() {
    return new InetSocketAddress(InetAddress.getLoopbackAddress(), 0);
  }

  private static SSLContext jdkContext(Credential own, DeploymentCa ca)
      throws GeneralSecurityException, IOException {
    KeyStore ks = KeyStore.getInstance("PKCS12");
    ks.load(null, null);
    ks.setKeyEntry(
        "own",
        own.privateKey(),
        new char[0],
        new Certificate[] {own.certificate(), ca.certificate()});
    KeyStore trust = KeyStore.getInstance("PKCS12");
    trust.load(null, null);
    trust.setCertificateEntry("ca", ca.certificate());
    KeyManagerFactory kmf = KeyManagerFactory.getInstance("SunX509");
    kmf.init(ks, new char[0]);
    TrustManagerFactory tmf = TrustManagerFactory.getInstance("PKIX");
    tmf.init(trust);
    SSLContext ctx = SSLContext.getInstance("TLSv1.3", "SunJSSE");
    ctx.init(kmf.getKeyManagers(), tmf.getTrustManagers(), new SecureRandom());
    // full handshakes, as MutualTls makes them (no session tickets): without this the JDK client
    // resumes its cached session and the baseline measures resumption (ResumptionCost)
    ctx.getServerSessionContext().setSessionTimeout(7 * 24 * 3600 + 1);
    ctx.getClientSessionContext().setSessionTimeout(7 * 24 * 3600 + 1);
    return ctx;
  }

  /** Stops the servers and deletes the CA. */
  @TearDown
  public void tearDown() throws Exception {
    for (Server s : new Server[] {srdmaPlain, srdmaNegotiating, jdkPlain}) {
      if (s != null) {
        s.close();
      }
    }
    try (Stream<Path> files = Files.walk(dir)) {
      files.sorted(Comparator.reverseOrder()).forEach(p -> p.toFile().delete());
    }
  }

  /** Baseline: the JDK's mutual TLS 1.3. */
  @Benchmark
  public int jdkMutualTls13() throws IOException {
    try (SSLSocket s = (SSLSocket) jdkClient.getSocketFactory().createSocket()) {
      s.setEnabledProtocols(new String[] {"TLSv1.3"});
      s.setTcpNoDelay(true);
      s.setSoTimeout((int) TIMEOUT.toMillis());
      s.connect(jdkPlain.address(), (int) TIMEOUT.toMillis());
      s.startHandshake();
      return readOne(s);
    }
  }

  /** Our mutual TLS 1.3 contexts alone. */
  @Benchmark
  public int srdmaMutualTls13() throws IOException {
    AuthenticatedPeer p = srdmaClient.connect(srdmaPlain.address(), TIMEOUT);
    try (SSLSocket s = p.socket()) {
      return readOne(s);
    }
  }

  /** Our mutual TLS 1.3 contexts plus the session key negotiation with confirmation. */
  @Benchmark
  public int srdmaMutualTls13WithKeyNegotiation() throws IOException {
    AuthenticatedPeer p = srdmaClient.connect(srdmaNegotiating.address(), TIMEOUT);
    try (SSLSocket s = p.socket();
        KeySchedule keys = KeyNegotiation.run(p, Role.INITIATOR, random, 0x111111)) {
      return keys.epoch();
    }
  }

  private static int readOne(SSLSocket s) throws IOException {
    InputStream in = s.getInputStream();
    int b = in.read();
    if (b != 1) {
      throw new IOException("server did not accept the connection");
    }
    return b;
  }

  /** What a server does with one accepted connection. */
  interface Handler {
    void handle(SSLSocket socket) throws IOException;
  }

  /** A loopback server serving one connection at a time on a named thread. */
  static final class Server implements AutoCloseable {
    private final ServerSocket listener;
    private final Thread thread;

    Server(String name, ServerSocket listener, Handler handler) {
      this.listener = listener;
      this.thread =
          new Thread(
              () -> {
                while (!listener.isClosed()) {
                  try (SSLSocket s = (SSLSocket) listener.accept()) {
                    s.setSoTimeout((int) TIMEOUT.toMillis());
                    s.setTcpNoDelay(true); // as MutualTls does on every socket
                    handler.handle(s);
                  } catch (IOException | RuntimeException e) {
                    if (!listener.isClosed()) {
                      System.err.println(name + ": " + e);
                    }
                  }
                }
              },
              name);
      thread.setDaemon(true);
      thread.start();
    }

    InetSocketAddress address() {
      return new InetSocketAddress(InetAddress.getLoopbackAddress(), listener.getLocalPort());
    }

    @Override
    public void close() throws IOException, InterruptedException {
      listener.close();
      thread.join(TIMEOUT.toMillis());
    }
  }
}
