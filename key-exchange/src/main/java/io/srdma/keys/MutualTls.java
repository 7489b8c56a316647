package io.srdma.keys;

import java.io.IOException;
import java.net.InetSocketAddress;
import java.net.Socket;
import java.net.SocketException;
import java.security.GeneralSecurityException;
import java.security.SecureRandom;
import java.security.cert.Certificate;
import java.security.cert.X509Certificate;
import java.time.Duration;
import java.util.Arrays;
import java.util.List;
import java.util.Objects;
import javax.net.ssl.KeyManager;
import javax.net.ssl.SSLContext;
import javax.net.ssl.SSLEngine;
import javax.net.ssl.SSLException;
import javax.net.ssl.SSLParameters;
import javax.net.ssl.SSLPeerUnverifiedException;
import javax.net.ssl.SSLServerSocket;
import javax.net.ssl.SSLSession;
import javax.net.ssl.SSLSessionContext;
import javax.net.ssl.SSLSocket;
import javax.net.ssl.TrustManager;

/**
 * Mutual TLS 1.3 for the control plane, on one side of a connection.
 *
 * <p>Settings (see docs/keys.md): TLS 1.3 only — no fallback; cipher suites AES-256-GCM,
 * AES-128-GCM and ChaCha20-Poly1305; client certificate required; the deployment CA is the only
 * trust anchor. The provider is the JDK's own (SunJSSE): on Java 17 it is about three times faster
 * than Bouncy Castle's JSSE for this handshake. Key exchange groups are the JDK's defaults (x25519
 * first); the deployment's P-256 certificates make the signature scheme ecdsa_secp256r1_sha256.
 *
 * <p>Trust is decided on every connection. Session resumption is off: neither side issues nor keeps
 * session tickets (both session contexts have a lifetime above the 7-day ticket limit, which makes
 * SunJSSE send no NewSessionTicket and discard any it receives), and {@link #handshake} refuses a
 * connection on which the trust manager verified no certificate — a resumed one — with {@link
 * KeyExchangeException.Reason#RESUMPTION_REFUSED}. After every handshake it verifies the peer's
 * certificate again with the deployment trust (CA, CRL, validity, usage, role, expected identity),
 * so a revocation that lands during a handshake still counts.
 *
 * <p>A peer's certificates are parsed by the JDK before it is authenticated. On blocking sockets
 * ({@link #handshake}, {@link #connect}) what a peer may send for that is bounded only by the JDK
 * ({@code jdk.tls.maxHandshakeMessageSize}, 32 KiB, enough for a certificate nested deep enough to
 * overflow a thread's stack): serve untrusted peers through engines on the secure channel's
 * transport, which takes at most 16 KiB before the handshake finished, or lower that property
 * (docs/keys.md, "Certificates from peers not yet authenticated").
 *
 * <p>Typical server use:
 *
 * <pre>{@code
 * MutualTls tls = MutualTls.server(credential, ca.trust());
 * try (SSLServerSocket listener = tls.bind(new InetSocketAddress(port), 128)) {
 *   SSLSocket s = (SSLSocket) listener.accept();
 *   AuthenticatedPeer peer = tls.handshake(s, Duration.ofSeconds(10)); // typed error on refusal
 *   ...
 * }
 * }</pre>
 */
public final class MutualTls {
  /** The only protocol version. */
  public static final String PROTOCOL = "TLSv1.3";

  /** Accepted cipher suites, in order of preference. */
  public static final List<String> CIPHER_SUITES =
      List.of("TLS_AES_256_GCM_SHA384", "TLS_AES_128_GCM_SHA256", "TLS_CHACHA20_POLY1305_SHA256");

  /**
   * Lifetime given to both session contexts: above SunJSSE's 7-day ticket limit
   * (NewSessionTicket.MAX_TICKET_LIFETIME, Java 17 to 25), so no ticket is sent or kept.
   */
  static final int NO_TICKET_SESSION_TIMEOUT_SECONDS = 7 * 24 * 3600 + 1;

  private static final String JSSE_PROVIDER = "SunJSSE";

  private final SSLContext context;
  private final DeploymentTrust trust;
  private final DeploymentTrustManager trustManager;
  private final PeerIdentity expectedPeer;
  private final boolean server;

  private MutualTls(
      Credential credential, DeploymentTrust trust, PeerIdentity expectedPeer, boolean server) {
    Objects.requireNonNull(credential, "credential");
    this.trust = Objects.requireNonNull(trust, "trust");
    this.expectedPeer = expectedPeer;
    this.server = server;
    this.trustManager = new DeploymentTrustManager(trust, server ? null : expectedPeer);
    this.context = newContext(credential, trust, trustManager);
  }

  /**
   * The server side: presents {@code credential} (a host's), requires and checks a client
   * certificate of a tenant peer.
   */
  public static MutualTls server(Credential credential, DeploymentTrust trust) {
    return new MutualTls(credential, trust, null, true);
  }

  /**
   * The client side, accepting any host of the deployment ({@code srdma://host/*} with serverAuth).
   * Prefer {@link #client(Credential, DeploymentTrust, PeerIdentity)}, which pins the host.
   */
  public static MutualTls client(Credential credential, DeploymentTrust trust) {
    return new MutualTls(credential, trust, null, false);
  }

  /**
   * The client side, pinned to one host: a server whose certificate names another identity is
   * refused with {@link KeyExchangeException.Reason#UNEXPECTED_PEER} while its certificate is
   * checked, before this side sends its own certificate or any data.
   *
   * @param expectedServer the host's identity, {@code srdma://host/<name>}
   */
  public static MutualTls client(
      Credential credential, DeploymentTrust trust, PeerIdentity expectedServer) {
    Objects.requireNonNull(expectedServer, "expectedServer");
    if (!expectedServer.isHost()) {
      throw new KeyExchangeException(
          KeyExchangeException.Reason.BAD_ARGUMENT,
          "the expected server must be a host identity srdma://"
              + PeerIdentity.HOST_TENANT
              + "/<name>, not "
              + expectedServer);
    }
    return new MutualTls(credential, trust, expectedServer, false);
  }

  private static SSLContext newContext(
      Credential credential, DeploymentTrust trust, DeploymentTrustManager trustManager) {
    try {
      // the key goes to the JDK's TLS as it is: a key store would wrap it with PBKDF2 for nothing
      KeyManager keys =
          new CredentialKeyManager(
              credential.privateKey(), credential.certificate(), trust.caCertificate());
      SSLContext ctx = SSLContext.getInstance(PROTOCOL, JSSE_PROVIDER);
      ctx.init(new KeyManager[] {keys}, new TrustManager[] {trustManager}, new SecureRandom());
      for (SSLSessionContext sessions :
          List.of(ctx.getServerSessionContext(), ctx.getClientSessionContext())) {
        sessions.setSessionTimeout(NO_TICKET_SESSION_TIMEOUT_SECONDS);
        sessions.setSessionCacheSize(1); // 0 would mean unlimited
      }
      return ctx;
    } catch (GeneralSecurityException e) {
      throw new KeyExchangeException(
          KeyExchangeException.Reason.CRYPTO_FAILURE, "cannot build the TLS context", e);
    }
  }

  /** Whether this is the server side. */
  public boolean isServer() {
    return server;
  }

  /** The underlying context, for frameworks that take one; configure its sockets and engines. */
  public SSLContext sslContext() {
    return context;
  }

  /** The protocol, cipher suite and client-authentication settings as standard parameters. */
  public SSLParameters parameters() {
    SSLParameters p = new SSLParameters();
    p.setProtocols(new String[] {PROTOCOL});
    p.setCipherSuites(CIPHER_SUITES.toArray(new String[0]));
    p.setUseCipherSuitesOrder(true);
    if (server) {
      p.setNeedClientAuth(true);
    }
    return p;
  }

  /** Applies all settings to a socket (done by {@link #handshake} and {@link #connect}). */
  public SSLSocket configure(SSLSocket socket) {
    socket.setUseClientMode(!server);
    socket.setSSLParameters(parameters());
    return socket;
  }

  /** Applies all settings to an engine. */
  public SSLEngine configure(SSLEngine engine) {
    engine.setUseClientMode(!server);
    engine.setSSLParameters(parameters());
    return engine;
  }

  /** A new configured engine. */
  public SSLEngine newEngine(String peerHost, int peerPort) {
    return configure(context.createSSLEngine(peerHost, peerPort));
  }

  /**
   * A listening server socket whose accepted sockets require TLS 1.3 and a client certificate.
   * Still pass each accepted socket to {@link #handshake}.
   */
  public SSLServerSocket bind(InetSocketAddress address, int backlog) {
    if (!server) {
      throw new IllegalStateException("bind() needs the server side");
    }
    try {
      SSLServerSocket s = (SSLServerSocket) context.getServerSocketFactory().createServerSocket();
      try {
        s.setReuseAddress(true);
        s.setSSLParameters(parameters());
        s.bind(address, backlog);
        return s;
      } catch (IOException | RuntimeException e) {
        s.close();
        throw e;
      }
    } catch (IOException e) {
      throw new KeyExchangeException(
          KeyExchangeException.Reason.IO_ERROR, "cannot listen on " + address, e);
    }
  }

  /**
   * Connects to a server and completes the handshake.
   *
   * @param timeout bounds the connect and each read of the handshake
   * @throws KeyExchangeException with the reason the server or its certificate was refused
   */
  public AuthenticatedPeer connect(InetSocketAddress address, Duration timeout) {
    if (server) {
      throw new IllegalStateException("connect() needs the client side");
    }
    SSLSocket socket = null;
    try {
      socket = (SSLSocket) context.getSocketFactory().createSocket();
      socket.setTcpNoDelay(true);
      socket.connect(address, timeoutMillis(timeout));
      return handshake(socket, timeout);
    } catch (IOException e) {
      closeQuietly(socket, e);
      throw TlsFailures.classify(e);
    } catch (RuntimeException e) {
      closeQuietly(socket, e);
      throw e;
    }
  }

  /**
   * Configures a socket, runs its handshake and verifies the peer again; on failure the socket is
   * closed.
   *
   * @param timeout bounds each read of the handshake
   * @return the authenticated peer, its identity taken from its certificate
   * @throws KeyExchangeException whose reason says why the handshake failed; {@link
   *     KeyExchangeException.Reason#RESUMPTION_REFUSED} if the peer resumed a session
   */
  public AuthenticatedPeer handshake(SSLSocket socket, Duration timeout) {
    try {
      configure(socket);
      // the handshake and control frames are small messages: Nagle plus delayed ACKs would add
      // tens of milliseconds per round trip
      socket.setTcpNoDelay(true);
      int previous = socket.getSoTimeout();
      socket.setSoTimeout(timeoutMillis(timeout));
      trustManager.forget(socket);
      socket.startHandshake();
      socket.setSoTimeout(previous);
      SSLSession session = socket.getSession();
      X509Certificate peer = verifyCompleted(session, trustManager.takeVerified(socket));
      return new AuthenticatedPeer(socket, PeerIdentity.fromCertificate(peer), peer);
    } catch (SSLPeerUnverifiedException e) {
      closeQuietly(socket, e);
      throw new KeyExchangeException(
          KeyExchangeException.Reason.NO_CERTIFICATE, "the peer presented no certificate", e);
    } catch (SSLException | SocketException e) {
      closeQuietly(socket, e);
      throw TlsFailures.classify(e);
    } catch (IOException e) {
      closeQuietly(socket, e);
      throw TlsFailures.classify(e);
    } catch (RuntimeException e) {
      closeQuietly(socket, e);
      throw e;
    }
  }

  /**
   * The checks {@link #handshake} makes, for an engine configured by {@link #configure(SSLEngine)}
   * whose handshake has finished: call it once per handshake before using the connection, and close
   * the engine if it throws.
   *
   * @return the peer's identity
   * @throws KeyExchangeException as {@link #handshake}
   */
  public PeerIdentity verifyHandshake(SSLEngine engine) {
    try {
      return PeerIdentity.fromCertificate(
          verifyCompleted(engine.getSession(), trustManager.takeVerified(engine)));
    } catch (SSLPeerUnverifiedException e) {
      throw new KeyExchangeException(
          KeyExchangeException.Reason.NO_CERTIFICATE, "the peer presented no certificate", e);
    }
  }

  /**
   * Why a handshake failed, as the typed error {@link #handshake} throws: for handshakes a caller
   * drives itself on an {@link SSLEngine}.
   *
   * @param failure what the engine or the connection threw
   */
  public static KeyExchangeException failure(Throwable failure) {
    return TlsFailures.classify(failure);
  }

  /**
   * The peer of an engine configured by {@link #configure(SSLEngine)} whose handshake has finished,
   * after the checks {@link #handshake} makes ({@link #verifyHandshake}); call it once per
   * handshake before using the connection, and close the engine if it throws.
   *
   * @throws KeyExchangeException as {@link #handshake}
   */
  public AuthenticatedPeer authenticated(SSLEngine engine) {
    SSLSession session = engine.getSession();
    try {
      X509Certificate peer = verifyCompleted(session, trustManager.takeVerified(engine));
      return new AuthenticatedPeer(null, session, PeerIdentity.fromCertificate(peer), peer);
    } catch (SSLPeerUnverifiedException e) {
      throw new KeyExchangeException(
          KeyExchangeException.Reason.NO_CERTIFICATE, "the peer presented no certificate", e);
    }
  }

  /**
   * Decides trust for one finished handshake: TLS 1.3, a full handshake (the trust manager verified
   * {@code verifiedInHandshake} on this very connection), and the peer's chain still accepted now.
   */
  private X509Certificate verifyCompleted(SSLSession session, X509Certificate verifiedInHandshake)
      throws SSLPeerUnverifiedException {
    if (!PROTOCOL.equals(session.getProtocol())) {
      throw new KeyExchangeException(
          KeyExchangeException.Reason.PROTOCOL_VERSION,
          "negotiated " + session.getProtocol() + ", only TLS 1.3 is accepted");
    }
    Certificate[] presented = session.getPeerCertificates();
    X509Certificate[] chain = new X509Certificate[presented.length];
    for (int i = 0; i < chain.length; i++) {
      if (!(presented[i] instanceof X509Certificate)) {
        throw new KeyExchangeException(
            KeyExchangeException.Reason.CERTIFICATE_INVALID, "the peer's certificate is not X.509");
      }
      chain[i] = (X509Certificate) presented[i];
    }
    if (chain.length == 0 || verifiedInHandshake == null || !verifiedInHandshake.equals(chain[0])) {
      // no certificate was checked in this handshake: the peer resumed an earlier session, whose
      // certificate may have been revoked since, or was never this peer's
      throw new KeyExchangeException(
          KeyExchangeException.Reason.RESUMPTION_REFUSED,
          "the peer resumed a TLS session instead of presenting its certificate; only full"
              + " handshakes are accepted");
    }
    PeerIdentity identity =
        trust.verify(chain, server ? CertificateUsage.TLS_CLIENT : CertificateUsage.TLS_SERVER);
    if (!server) {
      DeploymentTrustManager.checkExpected(expectedPeer, identity);
    }
    return chain[0];
  }

  /** The host this client is pinned to, or {@code null} (server, or any host). */
  public PeerIdentity expectedPeer() {
    return expectedPeer;
  }

  private static int timeoutMillis(Duration timeout) {
    long ms = timeout.toMillis();
    if (ms <= 0 || ms > Integer.MAX_VALUE) {
      throw new KeyExchangeException(
          KeyExchangeException.Reason.BAD_ARGUMENT, "timeout must be positive: " + timeout);
    }
    return (int) ms;
  }

  private static void closeQuietly(Socket socket, Throwable primary) {
    if (socket != null) {
      try {
        socket.close();
      } catch (IOException e) {
        primary.addSuppressed(e);
      }
    }
  }

  @Override
  public String toString() {
    return "MutualTls["
        + (server ? "server" : "client")
        + ", "
        + PROTOCOL
        + ", "
        + Arrays.toString(CIPHER_SUITES.toArray())
        + (expectedPeer == null ? "" : ", expecting " + expectedPeer)
        + "]";
  }
}
