package io.srdma.policy;

import java.security.GeneralSecurityException;
import java.security.cert.CertPathValidator;
import java.security.cert.CertPathValidatorException;
import java.security.cert.CertificateFactory;
import java.security.cert.CertificateParsingException;
import java.security.cert.PKIXParameters;
import java.security.cert.TrustAnchor;
import java.security.cert.X509CRL;
import java.security.cert.X509Certificate;
import java.time.Instant;
import java.util.Collection;
import java.util.Date;
import java.util.List;
import java.util.Objects;
import java.util.Set;

/**
 * Which certificates may sign audit checkpoints: those the deployment CA issued (JDK PKIX path
 * validation with the CA as the only trust anchor, at the checkpoint's time), not a CA, with key
 * usage digitalSignature, whose {@code srdma:} identity starts with a given prefix (a host's:
 * {@code srdma://host/}), and, given the CA's revocation list, not revoked. Thread-safe.
 */
public final class AuditCheckpointTrust {
  private final X509Certificate ca;
  private final X509CRL crl;
  private final String identityPrefix;

  private AuditCheckpointTrust(X509Certificate ca, X509CRL crl, String identityPrefix) {
    this.ca = ca;
    this.crl = crl;
    this.identityPrefix = identityPrefix;
  }

  /**
   * Trust in the deployment CA.
   *
   * @param ca the CA certificate
   * @param crl the CA's revocation list, or null not to check revocation
   * @param identityPrefix the start of the signer's {@code srdma:} SAN URI, e.g. {@code
   *     srdma://host/}
   * @return the trust
   * @throws AuditException if the revocation list is not signed by the CA
   */
  public static AuditCheckpointTrust issuedBy(
      X509Certificate ca, X509CRL crl, String identityPrefix) {
    Objects.requireNonNull(ca, "ca");
    Objects.requireNonNull(identityPrefix, "identityPrefix");
    if (crl != null) {
      try {
        crl.verify(ca.getPublicKey());
      } catch (GeneralSecurityException e) {
        throw new AuditException("the revocation list is not signed by the CA", e);
      }
    }
    return new AuditCheckpointTrust(ca, crl, identityPrefix);
  }

  /** The CA's subject, for reports. */
  public String caName() {
    return ca.getSubjectX500Principal().getName();
  }

  /**
   * Why {@code signer} may not sign a checkpoint made at {@code at}; null if it may.
   *
   * @param signer the certificate in the checkpoint
   * @param at the checkpoint's time
   * @return the refusal, or null
   */
  public String refusal(X509Certificate signer, Instant at) {
    Date date;
    try {
      date = Date.from(at);
    } catch (IllegalArgumentException e) {
      // an Instant reaches the year 1e9, a Date (and so PKIX) only ~2.9e8: a forged time
      return "checkpoint time " + at + " is beyond any time a certificate can be checked at";
    }
    try {
      PKIXParameters params = new PKIXParameters(Set.of(new TrustAnchor(ca, null)));
      params.setRevocationEnabled(false);
      params.setDate(date);
      CertPathValidator.getInstance("PKIX")
          .validate(
              CertificateFactory.getInstance("X.509").generateCertPath(List.of(signer)), params);
    } catch (CertPathValidatorException e) {
      return "certificate "
          + signer.getSubjectX500Principal().getName()
          + " is not valid under the CA "
          + caName()
          + " at "
          + at
          + " ("
          + e.getReason()
          + ")";
    } catch (GeneralSecurityException e) {
      return "certificate cannot be validated: " + e.getMessage();
    }
    if (signer.getBasicConstraints() >= 0) {
      return "a CA certificate cannot sign checkpoints";
    }
    boolean[] usage = signer.getKeyUsage();
    if (usage == null || !usage[0]) {
      return "certificate key usage lacks digitalSignature";
    }
    String identity = identity(signer);
    if (identity == null || !identity.startsWith(identityPrefix)) {
      return "certificate identity "
          + identity
          + " is not a host's (expected "
          + identityPrefix
          + "<name>)";
    }
    if (crl != null && crl.isRevoked(signer)) {
      return "certificate serial " + signer.getSerialNumber().toString(16) + " is revoked";
    }
    return null;
  }

  /** The certificate's single {@code srdma:} SAN URI, or null. */
  static String identity(X509Certificate c) {
    Collection<List<?>> names;
    try {
      names = c.getSubjectAlternativeNames();
    } catch (CertificateParsingException e) {
      return null;
    }
    String found = null;
    if (names != null) {
      for (List<?> n : names) {
        if (n.size() == 2
            && Integer.valueOf(6).equals(n.get(0))
            && n.get(1) instanceof String s
            && s.startsWith("srdma:")) {
          if (found != null) {
            return null;
          }
          found = s;
        }
      }
    }
    return found;
  }
}
