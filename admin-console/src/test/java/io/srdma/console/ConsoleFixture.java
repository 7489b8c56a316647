package io.srdma.console;

import io.srdma.keys.Credential;
import io.srdma.keys.DeploymentCa;
import io.srdma.keys.Pem;
import io.srdma.policy.AuditLog;
import io.srdma.policy.AuditTrail;
import io.srdma.policy.ConsoleUsers;
import io.vertx.core.Vertx;
import io.vertx.core.buffer.Buffer;
import io.vertx.core.http.HttpClient;
import io.vertx.core.http.HttpClientOptions;
import io.vertx.core.http.PoolOptions;
import io.vertx.core.net.PemTrustOptions;
import io.vertx.ext.web.client.WebClient;
import io.vertx.ext.web.client.WebClientOptions;
import java.io.IOException;
import java.nio.file.Path;
import java.security.GeneralSecurityException;
import java.security.KeyStore;
import java.time.Duration;
import java.util.List;
import javax.net.ssl.SSLContext;
import javax.net.ssl.TrustManagerFactory;

/**
 * A console on an ephemeral loopback port over a {@link FakeBackend}: a fresh deployment CA issues
 * its certificate for localhost and 127.0.0.1, the sample policy's demo users log in ({@value
 * #ADMIN_PASSWORD}, {@value #AUDITOR_PASSWORD}).
 */
final class ConsoleFixture implements AutoCloseable {
  static final String ADMIN_PASSWORD = "admin-demo";
  static final String AUDITOR_PASSWORD = "auditor-demo";
  static final int LOGIN_ATTEMPTS = 3;

  final DeploymentCa ca;
  final FakeBackend backend;
  final AuditLog log;
  final ConsoleServer server;
  final java.security.cert.X509Certificate serverCertificate;

  ConsoleFixture(Path dir) {
    this(dir, new ConsoleConfig());
  }

  ConsoleFixture(Path dir, ConsoleConfig config) {
    this(dir, config, b -> {});
  }

  /** A console whose fake backend {@code setUp} prepares before the console starts. */
  ConsoleFixture(Path dir, ConsoleConfig config, java.util.function.Consumer<FakeBackend> setUp) {
    ca = DeploymentCa.init(dir.resolve("ca"), null);
    Credential cert = ca.issueServer(List.of("localhost", "127.0.0.1"), Duration.ofDays(1));
    serverCertificate = cert.certificate();
    log = AuditLog.open(dir.resolve("audit.log"));
    backend = new FakeBackend(log);
    setUp.accept(backend);
    ConsoleServer s;
    try {
      s =
          ConsoleServer.start(
              config
                  .host("127.0.0.1")
                  .port(0)
                  .tls(cert, List.of(ca.certificate()))
                  .loginLimit(LOGIN_ATTEMPTS, Duration.ofMinutes(1))
                  .streamInterval(Duration.ofMillis(200)),
              backend,
              new ConsoleUsers(backend::policy),
              new AuditTrail(log));
    } catch (RuntimeException e) {
      log.close();
      throw e;
    }
    server = s;
  }

  String caPem() {
    return Pem.toPem(ca.certificate());
  }

  /**
   * An HTTPS client of this console that trusts only its CA, checks its host name and follows no
   * redirect (a page's redirect to the login is what some tests look for).
   */
  WebClient client(Vertx vertx) {
    return client(vertx, new PoolOptions());
  }

  /** {@link #client(Vertx)} with up to {@code connections} connections at once. */
  WebClient client(Vertx vertx, int connections) {
    return client(vertx, new PoolOptions().setHttp1MaxSize(connections));
  }

  private WebClient client(Vertx vertx, PoolOptions pool) {
    return WebClient.create(
        vertx, new WebClientOptions(httpOptions()).setFollowRedirects(false), pool);
  }

  /**
   * Options of a plain Vert.x HTTPS client of this console (requests and responses as streams, for
   * bodies sent in pieces): trusts only its CA, checks its host name; a caller may change them.
   */
  HttpClientOptions httpOptions() {
    return new HttpClientOptions()
        .setSsl(true)
        .setVerifyHost(true)
        .setTrustOptions(new PemTrustOptions().addCertValue(Buffer.buffer(caPem())))
        .setDefaultHost("127.0.0.1")
        .setDefaultPort(server.port());
  }

  /** A plain Vert.x HTTPS client of this console ({@link #httpOptions()}). */
  HttpClient http(Vertx vertx) {
    return vertx.createHttpClient(httpOptions());
  }

  /**
   * A JDK TLS 1.3 context that trusts only this console's CA, for raw sockets (bytes a client
   * library would refuse to send, a request never finished).
   */
  SSLContext tls() throws GeneralSecurityException, IOException {
    KeyStore trust = KeyStore.getInstance("PKCS12");
    trust.load(null, null);
    trust.setCertificateEntry("ca", ca.certificate());
    TrustManagerFactory tmf = TrustManagerFactory.getInstance("PKIX");
    tmf.init(trust);
    SSLContext c = SSLContext.getInstance("TLSv1.3");
    c.init(null, tmf.getTrustManagers(), null);
    return c;
  }

  @Override
  public void close() {
    try {
      server.close();
    } finally {
      log.close();
    }
  }
}
