package io.srdma.keys;

import java.security.cert.X509Certificate;
import javax.net.ssl.SSLSession;
import javax.net.ssl.SSLSocket;

/**
 * The far end of a completed mutual TLS handshake: its identity, read from the certificate the
 * deployment CA signed for it, and the connection.
 */
public final class AuthenticatedPeer {
  private final SSLSocket socket;
  private final SSLSession session;
  private final PeerIdentity identity;
  private final X509Certificate certificate;

  AuthenticatedPeer(SSLSocket socket, PeerIdentity identity, X509Certificate certificate) {
    this(socket, socket.getSession(), identity, certificate);
  }

  AuthenticatedPeer(
      SSLSocket socket, SSLSession session, PeerIdentity identity, X509Certificate certificate) {
    this.socket = socket;
    this.session = session;
    this.identity = identity;
    this.certificate = certificate;
  }

  /**
   * The connection; its owner closes it. Null when the handshake ran on an {@link
   * javax.net.ssl.SSLEngine} ({@link MutualTls#authenticated(javax.net.ssl.SSLEngine)}).
   */
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
   * The certificate transcript binding of this connection: {@code binding(role,
   * CERTIFICATE_TRANSCRIPT)}.
   *
   * @param role this party's role on the connection
   */
  public TlsBinding binding(Role role) {
    return binding(role, TlsBinding.Kind.CERTIFICATE_TRANSCRIPT);
  }

  /**
   * The TLS binding of this connection for the key schedule. Both ends must pick the same kind:
   * {@link TlsBinding.Kind#EXPORTER} only when both announced it (docs/protocol.md, HELLO
   * capabilities); otherwise the certificate transcript of the initiator's and the responder's
   * certificates.
   *
   * @param role this party's role on the connection
   * @param kind the kind both ends agreed on
   */
  public TlsBinding binding(Role role, TlsBinding.Kind kind) {
    if (kind == TlsBinding.Kind.EXPORTER) {
      return TlsBinding.exporter(session);
    }
    java.security.cert.Certificate[] local = session.getLocalCertificates();
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
    return "AuthenticatedPeer["
        + identity
        + ", "
        + (socket != null ? socket.getRemoteSocketAddress() : session.getPeerHost())
        + "]";
  }
}
