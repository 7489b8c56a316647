package io.srdma.keys;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.BasicFileAttributes;
import java.security.GeneralSecurityException;
import java.security.cert.X509CRL;
import java.security.cert.X509Certificate;
import java.time.Duration;
import java.time.Instant;
import java.util.Objects;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The deployment CA's certificate revocation list, checked on every handshake.
 *
 * <p>A list read from a file is re-read whenever the file changes, so {@code srdma cert revoke}
 * takes effect for new connections without a restart. The check fails closed: a missing list, one
 * not signed by the CA, or one past its {@code nextUpdate} refuses every certificate with {@link
 * KeyExchangeException.Reason#REVOCATION_STATUS_UNKNOWN}.
 */
public final class RevocationList {
  private static final Logger LOG = LoggerFactory.getLogger(RevocationList.class);

  /** Tolerated clock difference between the CA host and this host. */
  static final Duration CLOCK_SKEW = Duration.ofMinutes(5);

  private final X509Certificate ca;
  private final Path file;
  private X509CRL crl;
  private Object loadedVersion;
  private KeyExchangeException loadFailure;

  private RevocationList(X509Certificate ca, Path file, X509CRL crl) {
    this.ca = Objects.requireNonNull(ca, "ca");
    this.file = file;
    this.crl = crl;
  }

  /** A list read from {@code file}, re-read when the file changes. */
  public static RevocationList watching(Path file, X509Certificate ca) {
    return new RevocationList(ca, Objects.requireNonNull(file, "file"), null);
  }

  /** A fixed list, for callers that fetch the CRL themselves. */
  public static RevocationList of(X509CRL crl, X509Certificate ca) {
    RevocationList list = new RevocationList(ca, null, Objects.requireNonNull(crl, "crl"));
    list.verifyCrl(crl);
    return list;
  }

  /**
   * Refuses a certificate that is revoked or whose status cannot be established.
   *
   * @param certificate a certificate the CA issued
   * @param now the time of the check
   * @throws KeyExchangeException {@link KeyExchangeException.Reason#CERTIFICATE_REVOKED} or {@link
   *     KeyExchangeException.Reason#REVOCATION_STATUS_UNKNOWN}
   */
  public void check(X509Certificate certificate, Instant now) {
    X509CRL current = current();
    if (current.getThisUpdate().toInstant().isAfter(now.plus(CLOCK_SKEW))) {
      throw unknown("the revocation list is dated in the future");
    }
    if (current.getNextUpdate() != null && current.getNextUpdate().toInstant().isBefore(now)) {
      throw unknown("the revocation list expired; publish a new one (srdma ca crl)");
    }
    if (current.isRevoked(certificate)) {
      throw new KeyExchangeException(
          KeyExchangeException.Reason.CERTIFICATE_REVOKED,
          "certificate serial " + certificate.getSerialNumber().toString(16) + " is revoked");
    }
  }

  private synchronized X509CRL current() {
    if (file == null) {
      return crl;
    }
    Object version;
    try {
      BasicFileAttributes attrs = Files.readAttributes(file, BasicFileAttributes.class);
      version = attrs.lastModifiedTime().toMillis() + ":" + attrs.size() + ":" + attrs.fileKey();
    } catch (IOException e) {
      throw unknown("revocation list " + file + " is unreadable");
    }
    if (!version.equals(loadedVersion)) {
      loadedVersion = version;
      try {
        X509CRL loaded = Pem.readCrl(file);
        verifyCrl(loaded);
        crl = loaded;
        loadFailure = null;
        LOG.info(
            "revocation list {} loaded: {} revoked",
            file,
            loaded.getRevokedCertificates() == null ? 0 : loaded.getRevokedCertificates().size());
      } catch (KeyExchangeException e) {
        crl = null;
        loadFailure = e;
        LOG.error("revocation list {} refused: {}", file, e.getMessage());
      }
    }
    if (crl == null) {
      throw new KeyExchangeException(
          KeyExchangeException.Reason.REVOCATION_STATUS_UNKNOWN,
          "revocation list " + file + " is not usable",
          loadFailure);
    }
    return crl;
  }

  private void verifyCrl(X509CRL candidate) {
    if (!candidate.getIssuerX500Principal().equals(ca.getSubjectX500Principal())) {
      throw unknown("the revocation list was not issued by the deployment CA");
    }
    try {
      candidate.verify(ca.getPublicKey());
    } catch (GeneralSecurityException e) {
      throw unknown("the revocation list's signature does not verify with the deployment CA");
    }
  }

  private static KeyExchangeException unknown(String why) {
    return new KeyExchangeException(KeyExchangeException.Reason.REVOCATION_STATUS_UNKNOWN, why);
  }

  @Override
  public String toString() {
    return "RevocationList[" + (file == null ? "fixed" : file.toString()) + "]";
  }
}
