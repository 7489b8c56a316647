package io.srdma.keys;

import java.lang.reflect.InvocationTargetException;
import java.lang.reflect.Method;
import java.security.GeneralSecurityException;
import java.security.MessageDigest;
import java.security.cert.CertificateEncodingException;
import java.security.cert.X509Certificate;
import java.util.concurrent.atomic.AtomicBoolean;
import javax.net.ssl.ExtendedSSLSession;
import javax.net.ssl.SSLSession;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * What ties a session's keys to its TLS connection: 32 bytes used as the HKDF-Extract salt of the
 * {@link KeySchedule}, and its kind, which is also bound into the schedule.
 *
 * <p>Two kinds (docs/keys.md):
 *
 * <ul>
 *   <li>{@link Kind#EXPORTER}: the TLS 1.3 exporter (RFC 8446 §7.5), {@value #EXPORTER_LABEL} with
 *       an empty context — secret material of this very connection, derived from its whole
 *       handshake transcript. Java 25 offers it ({@code
 *       ExtendedSSLSession.exportKeyingMaterialData}); it is called reflectively because the code
 *       compiles for Java 17. Used when both ends announce it in HELLO ({@link
 *       #exporterAvailable()}).
 *   <li>{@link Kind#CERTIFICATE_TRANSCRIPT}: a hash of both certificates, in initiator-responder
 *       order, for Java 17, whose TLS stack exports nothing (nor does Bouncy Castle's JSSE 1.82: it
 *       wipes the exporter secret when the handshake ends). With the ephemeral public keys in the
 *       schedule context this is the transcript binding DESIGN.md §3 names: each side hashes the
 *       identities it authenticated in this connection's full handshake. It is sound only because
 *       {@link MutualTls} refuses session resumption: every connection proves both certificates.
 * </ul>
 */
public final class TlsBinding implements AutoCloseable {
  private static final Logger LOG = LoggerFactory.getLogger(TlsBinding.class);
  private static final AtomicBoolean ANNOUNCED = new AtomicBoolean();

  /** Length of a binding value. */
  public static final int LENGTH = 32;

  /** The exporter label (RFC 5705 §4: labels for private use begin with "EXPORTER"). */
  public static final String EXPORTER_LABEL = "EXPORTER-srdma-v1-session-binding";

  private static final Method EXPORT = findExporter();

  /** How the binding was obtained. */
  public enum Kind {
    /** TLS 1.3 exported keying material (Java 25 and later). */
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
            "session keys are bound to the certificate transcript: the TLS exporter is not"
                + " available at both ends (docs/keys.md)");
      }
      return new TlsBinding(Kind.CERTIFICATE_TRANSCRIPT, sha.digest());
    } catch (CertificateEncodingException e) {
      throw new KeyExchangeException(
          KeyExchangeException.Reason.CERTIFICATE_INVALID, "certificate cannot be encoded", e);
    } catch (GeneralSecurityException e) {
      throw Pem.internal("SHA-256 unavailable", e);
    }
  }

  /** Whether this runtime's TLS stack exports keying material (Java 25 and later). */
  public static boolean exporterAvailable() {
    return EXPORT != null;
  }

  private static Method findExporter() {
    try {
      return ExtendedSSLSession.class.getMethod(
          "exportKeyingMaterialData", String.class, byte[].class, int.class);
    } catch (NoSuchMethodException e) {
      return null; // Java 17 to 24
    }
  }

  /**
   * The exporter binding of a TLS 1.3 session: {@value #LENGTH} bytes of {@value #EXPORTER_LABEL}
   * with an empty context.
   *
   * @throws KeyExchangeException {@link KeyExchangeException.Reason#BAD_ARGUMENT} if this runtime
   *     has no exporter ({@link #exporterAvailable()}), {@link
   *     KeyExchangeException.Reason#CRYPTO_FAILURE} if the session refuses to export
   */
  public static TlsBinding exporter(SSLSession session) {
    if (EXPORT == null) {
      throw new KeyExchangeException(
          KeyExchangeException.Reason.BAD_ARGUMENT,
          "this runtime's TLS stack exports no keying material (Java 25 or later needed)");
    }
    if (!(session instanceof ExtendedSSLSession)) {
      throw new KeyExchangeException(
          KeyExchangeException.Reason.BAD_ARGUMENT,
          "the TLS session cannot export keying material");
    }
    try {
      byte[] value = (byte[]) EXPORT.invoke(session, EXPORTER_LABEL, new byte[0], LENGTH);
      if (value == null || value.length != LENGTH) {
        throw new KeyExchangeException(
            KeyExchangeException.Reason.CRYPTO_FAILURE, "the TLS exporter returned no value");
      }
      return new TlsBinding(Kind.EXPORTER, value);
    } catch (InvocationTargetException e) {
      throw new KeyExchangeException(
          KeyExchangeException.Reason.CRYPTO_FAILURE,
          "the TLS exporter failed: " + e.getCause(),
          e.getCause());
    } catch (IllegalAccessException e) {
      throw new KeyExchangeException(
          KeyExchangeException.Reason.CRYPTO_FAILURE, "the TLS exporter is not accessible", e);
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
