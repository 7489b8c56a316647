package io.srdma.cluster;

import io.etcd.jetcd.Client;
import io.etcd.jetcd.ClientBuilder;
import io.etcd.jetcd.Watch;
import io.etcd.jetcd.common.exception.ErrorCode;
import io.etcd.jetcd.common.exception.EtcdException;
import io.grpc.netty.GrpcSslContexts;
import io.netty.handler.ssl.SslContext;
import io.srdma.keys.KeyExchangeException;
import io.srdma.keys.Pem;
import io.srdma.keys.TrustAnchorValidity;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.security.PrivateKey;
import java.security.cert.X509Certificate;
import java.time.Clock;
import java.time.Duration;
import java.util.Arrays;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.function.UnaryOperator;
import javax.naming.InvalidNameException;
import javax.naming.ldap.LdapName;
import javax.naming.ldap.Rdn;
import javax.net.ssl.SSLException;
import javax.net.ssl.X509ExtendedTrustManager;

/**
 * One etcd client, over mutual TLS with the configured client certificate, TLS 1.3 only. Every
 * blocking call of this module goes through {@link #await}, which bounds it by the configured
 * request timeout. Close it to release the client's threads.
 */
public final class EtcdLink implements AutoCloseable {
  private final ClusterConfig config;
  private final Client client;
  private final Watch watches;
  private final String user;
  private final WatchLiveness liveness;

  private EtcdLink(ClusterConfig config, Client client, Watch watches, String user) {
    this.liveness = new WatchLiveness(config.watchCheckPeriod(), config.requestTimeout());
    this.config = config;
    this.client = client;
    this.watches = watches;
    this.user = user;
  }

  /** Most bytes read from the key's passphrase file. */
  static final int MAX_PASSPHRASE_BYTES = 64 << 10;

  /**
   * The passphrase file's text, stripped; read bounded, so that a file without end (/dev/zero) is a
   * refused configuration rather than an OutOfMemoryError.
   */
  private static char[] readPassphrase(Path file) throws IOException {
    byte[] raw;
    try (java.io.InputStream in = Files.newInputStream(file)) {
      raw = in.readNBytes(MAX_PASSPHRASE_BYTES + 1);
    }
    try {
      if (raw.length > MAX_PASSPHRASE_BYTES) {
        throw new ClusterException(
            ClusterException.Reason.BAD_CONFIG,
            "cluster TLS material: passphrase file "
                + file
                + " is larger than "
                + MAX_PASSPHRASE_BYTES
                + " bytes");
      }
      // strict, as Files.readString was: malformed UTF-8 is an error, not a guessed passphrase
      return StandardCharsets.UTF_8
          .newDecoder()
          .decode(java.nio.ByteBuffer.wrap(raw))
          .toString()
          .strip()
          .toCharArray();
    } finally {
      Arrays.fill(raw, (byte) 0);
    }
  }

  /**
   * Opens a client; nothing is sent until the first request.
   *
   * @throws ClusterException {@link ClusterException.Reason#BAD_CONFIG} if a file it names cannot
   *     be read
   */
  public static EtcdLink open(ClusterConfig config) {
    return open(config, UnaryOperator.identity());
  }

  /**
   * As {@link #open(ClusterConfig)}, the watches opened through {@code watches} applied to the
   * client's watch client (tests: a watch that etcd, or a proxy in between, ends).
   */
  static EtcdLink open(ClusterConfig config, UnaryOperator<Watch> watches) {
    X509Certificate ca;
    X509Certificate cert;
    PrivateKey key;
    char[] pass = null;
    try {
      if (config.keyPassphraseFile() != null) {
        pass = readPassphrase(config.keyPassphraseFile());
      }
      ca = Pem.readCertificate(config.caCertificate());
      cert = Pem.readCertificate(config.certificate());
      key = Pem.readPrivateKey(config.key(), pass);
    } catch (KeyExchangeException | IOException e) {
      throw new ClusterException(
          ClusterException.Reason.BAD_CONFIG, "cluster TLS material: " + e.getMessage(), e);
    } finally {
      if (pass != null) {
        Arrays.fill(pass, '\0');
      }
    }
    SslContext ssl;
    try {
      ssl =
          GrpcSslContexts.forClient() // ALPN h2, as gRPC needs
              .protocols("TLSv1.3")
              .trustManager(trustManager(ca, Clock.systemUTC()))
              .keyManager(key, cert)
              .build();
    } catch (SSLException e) {
      throw new ClusterException(
          ClusterException.Reason.BAD_CONFIG, "cluster TLS context: " + e.getMessage(), e);
    }
    ClientBuilder b =
        Client.builder()
            .endpoints(config.endpoints())
            .sslContext(ssl)
            .connectTimeout(config.requestTimeout())
            .keepaliveTime(Duration.ofSeconds(5))
            .keepaliveTimeout(config.requestTimeout())
            .retryMaxDuration(config.requestTimeout())
            .loadBalancerPolicy("round_robin") // a dead member is skipped, not waited on
            .waitForReady(false);
    if (config.serverName() != null) {
      b.authority(config.serverName());
    }
    Client client = b.build();
    return new EtcdLink(config, client, watches.apply(client.getWatchClient()), commonName(cert));
  }

  /**
   * How the client trusts etcd's server certificate: the JDK's PKIX validation against the cluster
   * CA, and the CA's own validity period checked on every handshake (PKIX ignores it), judged at
   * {@code clock}.
   */
  static X509ExtendedTrustManager trustManager(X509Certificate ca, Clock clock) {
    return new TrustAnchorValidity(ca, clock).pkixTrustManager();
  }

  /** The CN of a certificate's subject (etcd's user for it under RBAC), or "" if none. */
  static String commonName(X509Certificate cert) {
    try {
      LdapName dn = new LdapName(cert.getSubjectX500Principal().getName());
      for (Rdn rdn : dn.getRdns()) {
        if (rdn.getType().equalsIgnoreCase("CN")) {
          return rdn.getValue().toString();
        }
      }
    } catch (InvalidNameException e) {
      // no CN
    }
    return "";
  }

  /**
   * The etcd user this client acts as once etcd's auth is enabled: the CN of the client certificate
   * ({@code --client-cert-auth}).
   */
  public String user() {
    return user;
  }

  /** The configuration. */
  public ClusterConfig config() {
    return config;
  }

  /** The key layout. */
  public ClusterKeys keys() {
    return config.keys();
  }

  /** The jetcd client. */
  public Client client() {
    return client;
  }

  /** The client watches go through ({@link Watches}): the jetcd client's own but in tests. */
  Watch watches() {
    return watches;
  }

  /** The liveness of the watches opened on this link ({@link Watches}). */
  WatchLiveness liveness() {
    return liveness;
  }

  /**
   * Waits for a request, at most the request timeout.
   *
   * @throws ClusterException {@link ClusterException.Reason#UNAVAILABLE} on timeout or failure
   */
  public <T> T await(CompletableFuture<T> f, String what) {
    try {
      return f.get(config.requestTimeout().toMillis(), TimeUnit.MILLISECONDS);
    } catch (TimeoutException e) {
      f.cancel(true);
      throw new ClusterException(
          ClusterException.Reason.UNAVAILABLE,
          what + ": etcd did not answer within " + config.requestTimeout(),
          e);
    } catch (ExecutionException e) {
      Throwable c = e.getCause() == null ? e : e.getCause();
      if (permissionDenied(c)) {
        throw new ClusterException(
            ClusterException.Reason.DENIED,
            what
                + ": etcd refused it: permission denied for etcd user '"
                + user
                + "' (the CN of "
                + config.certificate()
                + "); its role does not allow this under "
                + config.prefix()
                + " (docs/cluster.md, Access control)",
            c);
      }
      throw new ClusterException(
          ClusterException.Reason.UNAVAILABLE, what + ": etcd failed: " + c.getMessage(), c);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      f.cancel(true);
      throw new ClusterException(ClusterException.Reason.INTERRUPTED, what + ": interrupted", e);
    }
  }

  /**
   * Whether etcd refused a write outright (so nothing was written): access denied, quota or size
   * exceeded, an invalid or unknown argument (a lease not found). Unavailability, timeouts and
   * cancellations are not refusals: such a write may have been applied.
   */
  static boolean refusal(Throwable t) {
    if (permissionDenied(t) || EtcdRange.tooLarge(t)) {
      return true;
    }
    for (Throwable c = t; c != null; c = c.getCause() == c ? null : c.getCause()) {
      if (c instanceof EtcdException ee && REFUSALS.contains(ee.getErrorCode().name())) {
        return true;
      }
      if (c instanceof io.grpc.StatusRuntimeException s
          && REFUSALS.contains(s.getStatus().getCode().name())) {
        return true;
      }
    }
    return false;
  }

  /** gRPC codes (and jetcd's ErrorCode names for them) that etcd answers before applying. */
  private static final java.util.Set<String> REFUSALS =
      java.util.Set.of(
          "INVALID_ARGUMENT",
          "NOT_FOUND",
          "ALREADY_EXISTS",
          "PERMISSION_DENIED",
          "RESOURCE_EXHAUSTED",
          "FAILED_PRECONDITION",
          "OUT_OF_RANGE",
          "UNAUTHENTICATED");

  /** Whether etcd answered "not found" (e.g. a lease that expired), anywhere in the cause chain. */
  static boolean notFound(Throwable t) {
    for (Throwable c = t; c != null; c = c.getCause() == c ? null : c.getCause()) {
      if (c instanceof EtcdException ee && ee.getErrorCode() == ErrorCode.NOT_FOUND) {
        return true;
      }
      if (c instanceof io.grpc.StatusRuntimeException s
          && s.getStatus().getCode() == io.grpc.Status.Code.NOT_FOUND) {
        return true;
      }
      if (c.getMessage() != null && c.getMessage().contains("requested lease not found")) {
        return true;
      }
    }
    return false;
  }

  /** Whether etcd's answer was "permission denied" (RBAC), anywhere in the cause chain. */
  static boolean permissionDenied(Throwable t) {
    for (Throwable c = t; c != null; c = c.getCause() == c ? null : c.getCause()) {
      if (c instanceof EtcdException ee && ee.getErrorCode() == ErrorCode.PERMISSION_DENIED) {
        return true;
      }
      if (c.getMessage() != null && c.getMessage().contains("permission denied")) {
        return true;
      }
    }
    return false;
  }

  /**
   * Runs an operation, and once more if etcd did not answer: the first request after a member dies
   * can wait on that member's connection until the timeout, while the next goes to a live one. Only
   * for operations that are safe to repeat (reads, and writes guarded by compare-and-swap that
   * recognise their own earlier success).
   */
  public <T> T retryOnce(java.util.function.Supplier<T> op) {
    try {
      return op.get();
    } catch (ClusterException e) {
      if (e.reason() != ClusterException.Reason.UNAVAILABLE) {
        throw e;
      }
      return op.get();
    }
  }

  @Override
  public void close() {
    client.close();
  }
}
