package io.srdma.keys;

import java.security.cert.X509Certificate;
import javax.net.ssl.SSLSocket;

/**
 * The far end of a completed mutual TLS handshake: its identity, read from the certificate the
 * deployment CA signed for it, and the connection.
 */
public final class AuthenticatedPeer {
  private final SSLSocket socket;
  private final PeerIdentity identity;
  private final X509Certificate certificate;

  AuthenticatedPeer(SSLSocket socket, PeerIdentity identity, X509Certificate certificate) {
    this.socket = socket;
    this.identity = identity;
    this.certificate = certificate;
  }

  /** The connection; its owner closes it. */
  public SSLSocket socket() {
    return socket;
  }

  /** Who the peer is. */
  public PeerIdentity identity() {
    return identity;
  }

  /** The peer's certificate. */
  public X509Certificate certificate() {
    return certificate;
  }

  /**
   * The TLS binding of this connection for the key schedule: the certificate transcript of the
   * initiator's and the responder's certificates.
   *
   * @param role this party's role on the connection
   */
  public TlsBinding binding(Role role) {
    java.security.cert.Certificate[] local = socket.getSession().getLocalCertificates();
    if (local == null || local.length == 0) {
      throw new KeyExchangeException(
          KeyExchangeException.Reason.NO_CERTIFICATE, "this side presented no certificate");
    }
    X509Certificate mine = (X509Certificate) local[0];
    return role == Role.INITIATOR
        ? TlsBinding.certificateTranscript(mine, certificate)
        : TlsBinding.certificateTranscript(certificate, mine);
  }

  @Override
  public String toString() {
    return "AuthenticatedPeer[" + identity + ", " + socket.getRemoteSocketAddress() + "]";
  }
}
