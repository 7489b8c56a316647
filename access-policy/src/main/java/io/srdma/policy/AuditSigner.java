package io.srdma.policy;

import java.security.GeneralSecurityException;
import java.security.PrivateKey;
import java.security.PublicKey;
import java.security.Signature;
import java.security.cert.X509Certificate;
import java.util.Objects;

/**
 * Signs audit checkpoints with a host's certificate key (ECDSA P-256 with SHA-256 for the
 * deployment's certificates; RSA and Ed25519 keys work too), so that anyone holding the deployment
 * CA's certificate can check them, without the audit key. Thread-safe.
 */
public final class AuditSigner {
  private final X509Certificate certificate;
  private final PrivateKey key;
  private final String algorithm;

  private AuditSigner(X509Certificate certificate, PrivateKey key) {
    this.certificate = certificate;
    this.key = key;
    this.algorithm = algorithm(certificate.getPublicKey());
  }

  /**
   * A signer from a certificate and its private key.
   *
   * @param certificate the host's certificate, written into every checkpoint
   * @param key the private key of its public key
   * @return the signer
   * @throws AuditException if the key does not belong to the certificate
   */
  public static AuditSigner of(X509Certificate certificate, PrivateKey key) {
    AuditSigner s =
        new AuditSigner(
            Objects.requireNonNull(certificate, "certificate"), Objects.requireNonNull(key, "key"));
    byte[] probe = "srdma audit signer probe".getBytes(java.nio.charset.StandardCharsets.US_ASCII);
    if (!verify(certificate.getPublicKey(), probe, s.sign(probe))) {
      throw new AuditException("the checkpoint key does not belong to its certificate", null);
    }
    return s;
  }

  /** The certificate written into checkpoints. */
  public X509Certificate certificate() {
    return certificate;
  }

  byte[] sign(byte[] data) {
    try {
      Signature s = Signature.getInstance(algorithm);
      s.initSign(key);
      s.update(data);
      return s.sign();
    } catch (GeneralSecurityException e) {
      throw new AuditException("cannot sign an audit checkpoint: " + e, e);
    }
  }

  /** Whether {@code signature} is a valid signature of {@code data} by {@code publicKey}. */
  static boolean verify(PublicKey publicKey, byte[] data, byte[] signature) {
    try {
      Signature s = Signature.getInstance(algorithm(publicKey));
      s.initVerify(publicKey);
      s.update(data);
      return s.verify(signature);
    } catch (GeneralSecurityException | IllegalArgumentException e) {
      return false;
    }
  }

  static String algorithm(PublicKey k) {
    return switch (k.getAlgorithm()) {
      case "EC" -> "SHA256withECDSA";
      case "RSA" -> "SHA256withRSA";
      case "Ed25519", "EdDSA" -> "Ed25519";
      default ->
          throw new AuditException("unsupported checkpoint key type " + k.getAlgorithm(), null);
    };
  }

  @Override
  public String toString() {
    return "AuditSigner[" + certificate.getSubjectX500Principal().getName() + "]";
  }
}
