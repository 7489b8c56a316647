package io.srdma.keys;

import java.net.SocketTimeoutException;
import java.util.IdentityHashMap;
import java.util.Map;
import org.bouncycastle.tls.AlertDescription;
import org.bouncycastle.tls.TlsFatalAlert;
import org.bouncycastle.tls.TlsFatalAlertReceived;

/** Turns a failed handshake into a typed {@link KeyExchangeException}. */
final class TlsFailures {
  private TlsFailures() {}

  static KeyExchangeException classify(Throwable failure) {
    Map<Throwable, Boolean> seen = new IdentityHashMap<>();
    for (Throwable t = failure; t != null && seen.put(t, Boolean.TRUE) == null; t = t.getCause()) {
      if (t instanceof KeyExchangeException) {
        KeyExchangeException k = (KeyExchangeException) t;
        return new KeyExchangeException(k.reason(), k.getMessage(), failure);
      }
    }
    for (Throwable t = failure; t != null; t = t.getCause()) {
      if (t instanceof SocketTimeoutException) {
        return new KeyExchangeException(
            KeyExchangeException.Reason.HANDSHAKE_TIMEOUT, "handshake timed out", failure);
      }
      if (t instanceof TlsFatalAlert) {
        short alert = ((TlsFatalAlert) t).getAlertDescription();
        return byAlert(alert, "sent", failure);
      }
      if (t instanceof TlsFatalAlertReceived) {
        short alert = ((TlsFatalAlertReceived) t).getAlertDescription();
        return byAlert(alert, "received", failure);
      }
      if (t.getCause() == t) {
        break;
      }
    }
    return new KeyExchangeException(
        KeyExchangeException.Reason.HANDSHAKE_FAILED,
        "handshake failed: " + failure.getClass().getSimpleName(),
        failure);
  }

  private static KeyExchangeException byAlert(short alert, String direction, Throwable failure) {
    String text = "handshake failed, alert " + AlertDescription.getText(alert) + " " + direction;
    switch (alert) {
      case AlertDescription.protocol_version:
        return new KeyExchangeException(
            KeyExchangeException.Reason.PROTOCOL_VERSION,
            text + " (only TLS 1.3 is accepted)",
            failure);
      case AlertDescription.certificate_required:
        return new KeyExchangeException(
            KeyExchangeException.Reason.NO_CERTIFICATE,
            text + " (a client certificate is required)",
            failure);
      default:
        return new KeyExchangeException(
            KeyExchangeException.Reason.HANDSHAKE_FAILED, text, failure);
    }
  }
}
