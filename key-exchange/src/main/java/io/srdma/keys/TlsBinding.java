package io.srdma.keys;

import java.security.GeneralSecurityException;
import java.security.MessageDigest;
import java.security.cert.CertificateEncodingException;
import java.security.cert.X509Certificate;
import java.util.concurrent.atomic.AtomicBoolean;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * What ties a session's keys to its TLS connection: 32 bytes used as the HKDF-Extract salt of the
 * {@link KeySchedule}, and its kind, which is also bound into the schedule.
 *
 * <p>The preferred binding is the TLS 1.3 exporter (RFC 8446 §7.5). Bouncy Castle's JSSE 1.82 does
 * not make it reachable: it wipes the exporter master secret when the handshake ends ({@code
 * SecurityParameters.clear()} in {@code TlsProtocol.cleanupHandshake()}), before any JSSE caller
 * can ask, and {@code BCExtendedSSLSession.exportKeyingMaterialData} is not implemented; the JDK 17
 * provider has no exporter API at all. So the binding is {@link #certificateTranscript}: a hash of
 * both certificates, in initiator-responder order. With the ephemeral public keys in the schedule
 * context this is the transcript binding DESIGN.md §3 names: a relaying peer cannot make two
 * victims agree on keys, because each side hashes the identities it actually authenticated. {@link
 * Kind#EXPORTER} is reserved for the day the stack offers an exporter. See docs/keys.md.
 */
public final class TlsBinding implements AutoCloseable {
  private static final Logger LOG = LoggerFactory.getLogger(TlsBinding.class);
  private static final AtomicBoolean ANNOUNCED = new AtomicBoolean();

  /** Length of a binding value. */
  public static final int LENGTH = 32;

  /** How the binding was obtained. */
  public enum Kind {
    /** TLS 1.3 exported keying material (reserved: not offered by the TLS stack in use). */
    EXPORTER(1),
    /** SHA-256 over both certificates. */
    CERTIFICATE_TRANSCRIPT(2);

    private final int code;

    Kind(int code) {
      this.code = code;
    }

    /** The byte that identifies this kind in the key schedule context. */
    public int code() {
      return code;
    }
  }

  private final Kind kind;
  private final byte[] value;
  private boolean closed;

  private TlsBinding(Kind kind, byte[] value) {
    this.kind = kind;
    this.value = value;
  }

  /** For tests and vectors: a binding of a given value (copied). */
  static TlsBinding of(Kind kind, byte[] value) {
    if (value.length != LENGTH) {
      throw new KeyExchangeException(
          KeyExchangeException.Reason.BAD_ARGUMENT, "binding must be " + LENGTH + " bytes");
    }
    return new TlsBinding(kind, value.clone());
  }

  /**
   * The certificate transcript binding: SHA-256("srdma/v1 certificate transcript" ‖ 0x00 ‖ u32 len
   * ‖ initiator certificate DER ‖ u32 len ‖ responder certificate DER).
   */
  public static TlsBinding certificateTranscript(
      X509Certificate initiator, X509Certificate responder) {
    try {
      byte[] a = initiator.getEncoded();
      byte[] b = responder.getEncoded();
      MessageDigest sha = MessageDigest.getInstance("SHA-256");
      sha.update(Bytes.info("srdma/v1 certificate transcript"));
      sha.update(Bytes.u32(a.length));
      sha.update(a);
      sha.update(Bytes.u32(b.length));
      sha.update(b);
      if (ANNOUNCED.compareAndSet(false, true)) {
        LOG.info(
            "session keys are bound to the certificate transcript: the TLS stack exports no"
                + " keying material (docs/keys.md)");
      }
      return new TlsBinding(Kind.CERTIFICATE_TRANSCRIPT, sha.digest());
    } catch (CertificateEncodingException e) {
      throw new KeyExchangeException(
          KeyExchangeException.Reason.CERTIFICATE_INVALID, "certificate cannot be encoded", e);
    } catch (GeneralSecurityException e) {
      throw Pem.internal("SHA-256 unavailable", e);
    }
  }

  /** How this binding was obtained. */
  public Kind kind() {
    return kind;
  }

  /** The value itself (not a copy); package-private. */
  synchronized byte[] value() {
    if (closed) {
      throw new KeyExchangeException(KeyExchangeException.Reason.CLOSED, "TLS binding closed");
    }
    return value;
  }

  /** Wipes the value. Idempotent. */
  @Override
  public synchronized void close() {
    Bytes.wipe(value);
    closed = true;
  }

  @Override
  public String toString() {
    return "TlsBinding[" + kind + (closed ? ", closed" : "") + "]";
  }
}
