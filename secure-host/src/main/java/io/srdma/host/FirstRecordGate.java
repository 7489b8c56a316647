package io.srdma.host;

import io.srdma.keys.MutualTls;
import java.io.ByteArrayInputStream;
import java.io.IOException;
import java.io.InputStream;
import java.net.Socket;
import java.net.SocketTimeoutException;
import java.time.Duration;
import javax.net.ssl.SSLSocket;

/**
 * The first step after accept, before any TLS work: waits (bounded) for the first byte of the
 * client's first TLS record and only then layers TLS over the connection. An idle connection is
 * closed after the short first-record deadline instead of holding a pending-handshake slot for the
 * whole handshake timeout; a connection whose first byte is not a TLS handshake record is closed at
 * once. Stateless; each call is confined to the calling thread.
 */
final class FirstRecordGate {
  /** TLS record content type of a handshake record (RFC 8446 §5.1): every ClientHello starts so. */
  static final int HANDSHAKE_RECORD = 22;

  /** What the gate saw. */
  enum Outcome {
    /** The first byte arrived and starts a TLS handshake record. */
    TLS,
    /** Nothing arrived within the deadline. */
    IDLE,
    /** The peer closed before sending anything (a TCP health check, a port scan). */
    CLOSED,
    /** The first byte is not a TLS handshake record. */
    NOT_TLS
  }

  private FirstRecordGate() {}

  /**
   * Reads the first byte of {@code raw} within {@code deadline}.
   *
   * @return what arrived; on {@code TLS} the byte was {@link #HANDSHAKE_RECORD}
   */
  static Outcome await(Socket raw, Duration deadline) throws IOException {
    raw.setSoTimeout((int) Math.max(1, Math.min(Integer.MAX_VALUE, deadline.toMillis())));
    InputStream in = raw.getInputStream();
    int b;
    try {
      b = in.read();
    } catch (SocketTimeoutException e) {
      return Outcome.IDLE;
    }
    if (b < 0) {
      return Outcome.CLOSED;
    }
    return b == HANDSHAKE_RECORD ? Outcome.TLS : Outcome.NOT_TLS;
  }

  /**
   * A server-side TLS socket over {@code raw} that replays the byte {@link #await} consumed;
   * closing it closes {@code raw}.
   */
  static SSLSocket layer(Socket raw, MutualTls tls) throws IOException {
    byte[] consumed = {(byte) HANDSHAKE_RECORD};
    return (SSLSocket)
        tls.sslContext()
            .getSocketFactory()
            .createSocket(raw, new ByteArrayInputStream(consumed), true);
  }
}
