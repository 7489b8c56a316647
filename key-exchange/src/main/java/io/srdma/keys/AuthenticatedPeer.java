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
   * The exported keying material of this connection, to bind the session key schedule to it.
   *
   * @see TlsBinding#exported(SSLSocket)
   */
  public TlsBinding exportBinding() {
    return TlsBinding.exported(socket);
  }

  @Override
  public String toString() {
    return "AuthenticatedPeer[" + identity + ", " + socket.getRemoteSocketAddress() + "]";
  }
}
