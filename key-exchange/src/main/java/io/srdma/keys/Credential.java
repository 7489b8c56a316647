package io.srdma.keys;

import java.nio.file.Files;
import java.nio.file.Path;
import java.security.PrivateKey;
import java.security.cert.X509Certificate;
import java.util.Objects;

/**
 * A certificate and its private key: what a peer (or the console) presents in TLS.
 *
 * <p>{@link #toString()} names the certificate only. The JDK's EC private keys cannot be wiped from
 * memory; keep a credential only as long as the TLS contexts that use it.
 *
 * <p>Thread safety: immutable; one credential may serve many clients and threads. Buffers: none.
 */
public final class Credential {
  private final X509Certificate certificate;
  private final PrivateKey privateKey;

  private Credential(X509Certificate certificate, PrivateKey privateKey) {
    this.certificate = Objects.requireNonNull(certificate, "certificate");
    this.privateKey = Objects.requireNonNull(privateKey, "privateKey");
  }

  /** A credential from a certificate and the private key of its public key. */
  public static Credential of(X509Certificate certificate, PrivateKey privateKey) {
    return new Credential(certificate, privateKey);
  }

  /**
   * Reads a credential from PEM files.
   *
   * @param passphrase for an encrypted key; {@code null} if the key is not encrypted
   */
  public static Credential load(Path certificateFile, Path keyFile, char[] passphrase) {
    return new Credential(
        Pem.readCertificate(certificateFile), Pem.readPrivateKey(keyFile, passphrase));
  }

  /**
   * Writes the certificate and the key (owner-only) to two new files; nothing is written if either
   * exists.
   *
   * @param passphrase encrypts the key (PKCS#8, PBES2) if not {@code null} or empty
   */
  public void writeTo(Path certificateFile, Path keyFile, char[] passphrase) {
    for (Path p : new Path[] {certificateFile, keyFile}) {
      // a link counts, dangling or not: writeNew would refuse it after the key was written
      if (Files.exists(p, java.nio.file.LinkOption.NOFOLLOW_LINKS)) {
        throw new KeyExchangeException(
            KeyExchangeException.Reason.FILE_EXISTS, p + " already exists; not overwriting it");
      }
    }
    Pem.writePrivateKey(keyFile, privateKey, passphrase);
    try {
      Pem.writeCertificate(certificateFile, certificate);
    } catch (RuntimeException e) {
      // never a private key without its certificate: the pair is written whole or not at all
      try {
        Files.deleteIfExists(keyFile);
      } catch (java.io.IOException suppressed) {
        e.addSuppressed(suppressed);
      }
      throw e;
    }
  }

  /** The certificate. */
  public X509Certificate certificate() {
    return certificate;
  }

  /** The private key of the certificate's public key. */
  public PrivateKey privateKey() {
    return privateKey;
  }

  @Override
  public String toString() {
    return "Credential[subject="
        + certificate.getSubjectX500Principal().getName()
        + ", serial="
        + certificate.getSerialNumber().toString(16)
        + "]";
  }
}
