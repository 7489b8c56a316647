package io.srdma.keys;

import java.net.SocketTimeoutException;
import java.util.Collections;
import java.util.IdentityHashMap;
import java.util.Locale;
import java.util.Set;
import javax.net.ssl.SSLHandshakeException;

/**
 * Turns a failed handshake into a typed {@link KeyExchangeException}.
 *
 * <p>A refusal by our trust manager travels as the cause of the TLS exception and is taken from
 * there. The JDK's TLS stack reports its own refusals (protocol version, missing client
 * certificate) only as message text; the two messages recognised here are those of SunJSSE 17 to
 * 25, and {@code OpenSslTlsTest} and {@code MutualTlsTest} check them against the JDK in use.
 */
final class TlsFailures {
  private TlsFailures() {}

  static KeyExchangeException classify(Throwable failure) {
    Set<Throwable> seen = Collections.newSetFromMap(new IdentityHashMap<>());
    for (Throwable t = failure; t != null && seen.add(t); t = t.getCause()) {
      if (t instanceof KeyExchangeException) {
        KeyExchangeException k = (KeyExchangeException) t;
        return new KeyExchangeException(k.reason(), k.getMessage(), failure);
      }
      if (t instanceof SocketTimeoutException) {
        return new KeyExchangeException(
            KeyExchangeException.Reason.HANDSHAKE_TIMEOUT, "handshake timed out", failure);
      }
    }
    String m = failure.getMessage() == null ? "" : failure.getMessage();
    String lower = m.toLowerCase(Locale.ROOT);
    if (failure instanceof SSLHandshakeException) {
      if (lower.contains("protocol_version")
          || (lower.contains("requested protocol") && lower.contains("not enabled"))
          || (lower.contains("protocol versions") && lower.contains("not accepted"))
          || lower.contains("no appropriate protocol")) {
        return new KeyExchangeException(
            KeyExchangeException.Reason.PROTOCOL_VERSION,
            "handshake failed: " + m + " (only TLS 1.3 is accepted)",
            failure);
      }
      if (lower.contains("empty client certificate chain")
          || lower.contains("certificate_required")) {
        return new KeyExchangeException(
            KeyExchangeException.Reason.NO_CERTIFICATE,
            "handshake failed: " + m + " (a client certificate is required)",
            failure);
      }
    }
    return new KeyExchangeException(
        KeyExchangeException.Reason.HANDSHAKE_FAILED,
        "handshake failed: " + failure.getClass().getSimpleName() + ": " + m,
        failure);
  }
}
