package io.srdma.keys;

import java.net.Socket;
import java.security.cert.CertificateException;
import java.security.cert.X509Certificate;
import java.util.Collections;
import java.util.Map;
import java.util.WeakHashMap;
import javax.net.ssl.SSLEngine;
import javax.net.ssl.X509ExtendedTrustManager;

/**
 * Adapts {@link DeploymentTrust} to JSSE. A refusal is thrown as a {@link CertificateException}
 * whose cause is the typed {@link KeyExchangeException}; {@link TlsFailures} finds it again.
 *
 * <p>JSSE calls a trust manager only in a full handshake. Each certificate accepted here is
 * remembered against its socket or engine until {@link MutualTls} takes it after the handshake: a
 * handshake that leaves nothing to take did not verify a certificate, i.e. it resumed a session,
 * and is refused. Thread-safe.
 */
final class DeploymentTrustManager extends X509ExtendedTrustManager {
  private final DeploymentTrust trust;
  private final PeerIdentity expectedServer;
  // weak keys: a socket dropped before MutualTls takes its entry does not leak
  private final Map<Object, X509Certificate> verified =
      Collections.synchronizedMap(new WeakHashMap<>());

  DeploymentTrustManager(DeploymentTrust trust) {
    this(trust, null);
  }

  /**
   * @param expectedServer the identity the server must present, or {@code null} for any host of the
   *     deployment
   */
  DeploymentTrustManager(DeploymentTrust trust, PeerIdentity expectedServer) {
    this.trust = trust;
    this.expectedServer = expectedServer;
  }

  /** Forgets what was verified on {@code transport} (before a new handshake on it). */
  void forget(Object transport) {
    verified.remove(transport);
  }

  /** The peer certificate verified in the last handshake on {@code transport}, or null; once. */
  X509Certificate takeVerified(Object transport) {
    return verified.remove(transport);
  }

  /**
   * Refuses {@code actual} unless it is {@code expected} ({@code null}: anything goes).
   *
   * @throws KeyExchangeException {@link KeyExchangeException.Reason#UNEXPECTED_PEER}
   */
  static void checkExpected(PeerIdentity expected, PeerIdentity actual) {
    if (expected != null && !expected.equals(actual)) {
      throw new KeyExchangeException(
          KeyExchangeException.Reason.UNEXPECTED_PEER,
          "the peer's certificate names " + actual + ", not the expected " + expected);
    }
  }

  private void check(X509Certificate[] chain, CertificateUsage usage, Object transport)
      throws CertificateException {
    try {
      PeerIdentity identity = trust.verify(chain, usage);
      if (usage == CertificateUsage.TLS_SERVER) {
        checkExpected(expectedServer, identity);
      }
    } catch (KeyExchangeException e) {
      throw new CertificateException(e.getMessage(), e);
    }
    if (transport != null) {
      verified.put(transport, chain[0]);
    }
  }

  @Override
  public void checkClientTrusted(X509Certificate[] chain, String authType)
      throws CertificateException {
    check(chain, CertificateUsage.TLS_CLIENT, null);
  }

  @Override
  public void checkServerTrusted(X509Certificate[] chain, String authType)
      throws CertificateException {
    check(chain, CertificateUsage.TLS_SERVER, null);
  }

  @Override
  public void checkClientTrusted(X509Certificate[] chain, String authType, Socket socket)
      throws CertificateException {
    check(chain, CertificateUsage.TLS_CLIENT, socket);
  }

  @Override
  public void checkServerTrusted(X509Certificate[] chain, String authType, Socket socket)
      throws CertificateException {
    check(chain, CertificateUsage.TLS_SERVER, socket);
  }

  @Override
  public void checkClientTrusted(X509Certificate[] chain, String authType, SSLEngine engine)
      throws CertificateException {
    check(chain, CertificateUsage.TLS_CLIENT, engine);
  }

  @Override
  public void checkServerTrusted(X509Certificate[] chain, String authType, SSLEngine engine)
      throws CertificateException {
    check(chain, CertificateUsage.TLS_SERVER, engine);
  }

  @Override
  public X509Certificate[] getAcceptedIssuers() {
    return new X509Certificate[] {trust.caCertificate()};
  }
}
