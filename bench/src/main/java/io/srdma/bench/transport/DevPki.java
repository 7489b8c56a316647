package io.srdma.bench.transport;

import io.netty.handler.ssl.ClientAuth;
import io.netty.handler.ssl.SslContextBuilder;
import io.netty.handler.ssl.SslProvider;
import io.srdma.keys.Credential;
import io.srdma.keys.DeploymentCa;
import io.srdma.keys.DeploymentTrust;
import io.srdma.keys.MutualTls;
import io.srdma.keys.PeerIdentity;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.Comparator;
import java.util.stream.Stream;

/**
 * A throw-away deployment CA in a temporary directory with one credential for each end of a
 * benchmark connection: {@code srdma://bench/receiver} (TLS server) and {@code
 * srdma://bench/sender} (TLS client). Deleted on close.
 */
public final class DevPki implements AutoCloseable {
  /** The receiver is a host (TLS server): srdma://host/bench-receiver. */
  private static final String RECEIVER = "bench-receiver";

  private final Path dir;
  private final DeploymentTrust trust;
  private final Credential receiver;
  private final Credential sender;
  private boolean closed;

  private DevPki(Path dir, DeploymentTrust trust, Credential receiver, Credential sender) {
    this.dir = dir;
    this.trust = trust;
    this.receiver = receiver;
    this.sender = sender;
  }

  /** Creates the CA and issues both credentials (one day of validity). */
  public static DevPki create() {
    Path dir;
    try {
      dir = Files.createTempDirectory("srdma-bench-ca-");
    } catch (IOException e) {
      throw new UncheckedIOException("cannot create a temporary directory for the dev CA", e);
    }
    try {
      DeploymentCa ca = DeploymentCa.init(dir.resolve("ca"), null);
      return new DevPki(
          dir,
          ca.trust(),
          ca.issueHost(RECEIVER, Duration.ofDays(1)),
          ca.issuePeer(PeerIdentity.of("bench", "sender"), Duration.ofDays(1)));
    } catch (RuntimeException e) {
      delete(dir);
      throw e;
    }
  }

  /**
   * A Netty TLS 1.3 mutual-auth context builder for one end ({@code server}: the receiver,
   * requiring the client's certificate) with this CA's credentials and trust, for {@code provider}
   * ({@code tls-netty} and the JMH peer benchmark).
   */
  public SslContextBuilder nettyContext(SslProvider provider, boolean server) {
    Credential me = server ? receiver : sender;
    SslContextBuilder b =
        server
            ? SslContextBuilder.forServer(me.privateKey(), me.certificate(), trust.caCertificate())
            : SslContextBuilder.forClient()
                .keyManager(me.privateKey(), me.certificate(), trust.caCertificate());
    b.sslProvider(provider).protocols(MutualTls.PROTOCOL).trustManager(trust.trustManager());
    if (server) {
      b.clientAuth(ClientAuth.REQUIRE);
    }
    return b;
  }

  /** Trust in the dev CA only (with its revocation list). */
  public DeploymentTrust trust() {
    return trust;
  }

  /** The receiving end's credential, used as the TLS server. */
  public Credential receiver() {
    return receiver;
  }

  /** The sending end's credential, used as the TLS client. */
  public Credential sender() {
    return sender;
  }

  /** Mutual TLS 1.3 server side for the receiver. */
  public MutualTls serverTls() {
    return MutualTls.server(receiver, trust);
  }

  /** Mutual TLS 1.3 client side for the sender. */
  public MutualTls clientTls() {
    return MutualTls.client(sender, trust, PeerIdentity.host(RECEIVER));
  }

  @Override
  public synchronized void close() {
    if (!closed) {
      closed = true;
      delete(dir);
    }
  }

  private static void delete(Path dir) {
    try (Stream<Path> files = Files.walk(dir)) {
      for (Path p : (Iterable<Path>) files.sorted(Comparator.reverseOrder())::iterator) {
        Files.deleteIfExists(p);
      }
    } catch (IOException | UncheckedIOException e) {
      // a temporary directory left behind is not worth failing a benchmark for
    }
  }
}
