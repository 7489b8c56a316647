package io.srdma.keys;

import java.security.GeneralSecurityException;
import java.security.MessageDigest;
import java.security.cert.CertificateEncodingException;
import java.security.cert.X509Certificate;
import java.util.concurrent.atomic.AtomicLong;
import javax.net.ssl.SSLEngine;
import javax.net.ssl.SSLKeyException;
import javax.net.ssl.SSLSocket;
import org.bouncycastle.jsse.BCExtendedSSLSession;
import org.bouncycastle.jsse.BCSSLEngine;
import org.bouncycastle.jsse.BCSSLSocket;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * What ties a session's keys to one TLS connection: 32 bytes used as the HKDF-Extract salt of the
 * {@link KeySchedule}.
 *
 * <p>The normal binding is the TLS 1.3 exporter (RFC 8446 §7.5) with label {@value #EXPORTER_LABEL}
 * and an empty context: a secret only the two endpoints of this very connection know, so keys
 * cannot be moved to another connection. A TLS stack without an exporter can use {@link
 * #certificateTranscript}, a hash of both certificates, which binds the keys to the two identities
 * but not to the connection; it is explicit, logged and counted, never automatic.
 */
public final class TlsBinding implements AutoCloseable {
  private static final Logger LOG = LoggerFactory.getLogger(TlsBinding.class);
  private static final AtomicLong TRANSCRIPT_FALLBACKS = new AtomicLong();

  /** The exporter label. */
  public static final String EXPORTER_LABEL = "EXPORTER-srdma-key-schedule-v1";

  /** Length of a binding value. */
  public static final int LENGTH = 32;

  /** How the binding was obtained. */
  public enum Kind {
    /** TLS 1.3 exported keying material. */
    EXPORTER(1),
    /** SHA-256 over both certificates: the documented fallback. */
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
   * The exporter value of a connection made with {@link MutualTls}.
   *
   * @throws KeyExchangeException {@link KeyExchangeException.Reason#EXPORTER_UNAVAILABLE} if the
   *     socket is not from Bouncy Castle's JSSE or the handshake is not complete
   */
  public static TlsBinding exported(SSLSocket socket) {
    if (!(socket instanceof BCSSLSocket)) {
      throw unavailable("socket is not from the BCJSSE provider");
    }
    return exported(((BCSSLSocket) socket).getBCSession());
  }

  /** The exporter value of an engine made with {@link MutualTls}, after its handshake. */
  public static TlsBinding exported(SSLEngine engine) {
    if (!(engine instanceof BCSSLEngine)) {
      throw unavailable("engine is not from the BCJSSE provider");
    }
    return exported(((BCSSLEngine) engine).getBCSession());
  }

  private static TlsBinding exported(BCExtendedSSLSession session) {
    if (session == null || !MutualTls.PROTOCOL.equals(session.getProtocol())) {
      throw unavailable("no completed TLS 1.3 session");
    }
    try {
      return new TlsBinding(
          Kind.EXPORTER, session.exportKeyingMaterialData(EXPORTER_LABEL, new byte[0], LENGTH));
    } catch (SSLKeyException | RuntimeException e) {
      throw new KeyExchangeException(
          KeyExchangeException.Reason.EXPORTER_UNAVAILABLE, "keying material export failed", e);
    }
  }

  /**
   * The fallback binding: SHA-256("srdma/v1 certificate transcript" ‖ 0x00 ‖ u32 len ‖ initiator
   * certificate DER ‖ u32 len ‖ responder certificate DER). The ephemeral keys are bound by the key
   * schedule context in either case. Logged at WARN and counted.
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
      long n = TRANSCRIPT_FALLBACKS.incrementAndGet();
      LOG.warn(
          "session keys bound to the certificate transcript, not to the TLS connection"
              + " (the TLS stack exports no keying material); fallback #{}",
          n);
      return new TlsBinding(Kind.CERTIFICATE_TRANSCRIPT, sha.digest());
    } catch (CertificateEncodingException e) {
      throw new KeyExchangeException(
          KeyExchangeException.Reason.CERTIFICATE_INVALID, "certificate cannot be encoded", e);
    } catch (GeneralSecurityException e) {
      throw Pem.internal("SHA-256 unavailable", e);
    }
  }

  /** How many times this JVM fell back to {@link #certificateTranscript}. */
  public static long transcriptFallbacks() {
    return TRANSCRIPT_FALLBACKS.get();
  }

  private static KeyExchangeException unavailable(String why) {
    return new KeyExchangeException(KeyExchangeException.Reason.EXPORTER_UNAVAILABLE, why);
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
