package io.srdma.keys;

import java.io.IOException;
import java.math.BigInteger;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.BasicFileAttributes;
import java.security.GeneralSecurityException;
import java.security.MessageDigest;
import java.security.cert.CRLException;
import java.security.cert.X509CRL;
import java.security.cert.X509Certificate;
import java.time.Duration;
import java.time.Instant;
import java.util.Objects;
import org.bouncycastle.asn1.ASN1Integer;
import org.bouncycastle.asn1.ASN1OctetString;
import org.bouncycastle.asn1.x509.Extension;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The deployment CA's certificate revocation list, checked on every handshake.
 *
 * <p>A list read from a file is re-read whenever the file changes, so {@code srdma cert revoke}
 * takes effect for new connections without a restart. The check fails closed: a missing list, one
 * not signed by the CA, or one past its {@code nextUpdate} refuses every certificate with {@link
 * KeyExchangeException.Reason#REVOCATION_STATUS_UNKNOWN}.
 *
 * <p>Lists never go backwards: a list whose CRL number is lower than the highest this object has
 * accepted, or equal with different content, is refused with {@link
 * KeyExchangeException.Reason#CRL_ROLLBACK} and the list in force stays — so an older, still valid
 * list put back in place does not un-revoke anything. The high-water mark lives in memory, and with
 * a number file ({@link #watching(Path, X509Certificate, Path)}) in a {@link HighWaterMark} that
 * survives restarts (docs/keys.md). Thread-safe.
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
  // the highest CRL number ever accepted, and that list's encoding: kept even when the list in
  // force is later refused, so a rolled-back file never un-revokes anything
  private BigInteger highest;
  private byte[] highestEncoded;
  // where the highest number and the digest of that list survive a restart (null: memory only)
  private final HighWaterMark mark;
  private byte[] highestDigest;

  private RevocationList(X509Certificate ca, Path file, Path numberFile) {
    this.ca = Objects.requireNonNull(ca, "ca");
    this.file = file;
    this.mark = numberFile == null ? null : HighWaterMark.read(numberFile, "CRL number");
    if (mark != null) {
      highest = mark.number();
      highestDigest = mark.digest();
    }
  }

  /** A list read from {@code file}, re-read when the file changes. */
  public static RevocationList watching(Path file, X509Certificate ca) {
    return new RevocationList(ca, Objects.requireNonNull(file, "file"), null);
  }

  /**
   * A list read from {@code file}, whose highest accepted CRL number also survives restarts: it is
   * kept in {@code numberFile} (the number and the SHA-256 of that list, written atomically), so an
   * older, still-valid list put back while the process was down is refused at the next start too.
   * The number file must be writable by this process and by nobody else (a host's state directory).
   *
   * @throws KeyExchangeException {@code IO_ERROR} if {@code numberFile} exists but is unreadable or
   *     malformed, or writable by others ({@link HighWaterMark}: the deployment must not silently
   *     forget what it revoked)
   */
  public static RevocationList watching(Path file, X509Certificate ca, Path numberFile) {
    return new RevocationList(
        ca, Objects.requireNonNull(file, "file"), Objects.requireNonNull(numberFile, "numberFile"));
  }

  private static byte[] sha256(byte[] encoded) {
    return HighWaterMark.sha256(encoded);
  }

  /**
   * A fixed list, for callers that fetch the CRL themselves; newer lists are given to {@link
   * #update}.
   */
  public static RevocationList of(X509CRL crl, X509Certificate ca) {
    RevocationList list = new RevocationList(ca, null, null);
    list.update(Objects.requireNonNull(crl, "crl"));
    return list;
  }

  /**
   * Puts {@code candidate} in force if it is signed by the CA and does not go backwards.
   * Thread-safe.
   *
   * @throws KeyExchangeException {@link KeyExchangeException.Reason#CRL_ROLLBACK} if its CRL number
   *     is lower than the highest accepted so far, or equal with different content; {@link
   *     KeyExchangeException.Reason#REVOCATION_STATUS_UNKNOWN} if it is not the CA's or has no CRL
   *     number. Either way the list in force stays.
   */
  public synchronized void update(X509CRL candidate) {
    verifyCrl(candidate);
    BigInteger number = crlNumber(candidate);
    byte[] encoded = encoded(candidate);
    if (highest != null) {
      int order = number.compareTo(highest);
      if (order < 0) {
        throw new KeyExchangeException(
            KeyExchangeException.Reason.CRL_ROLLBACK,
            "revocation list number "
                + number
                + " is older than number "
                + highest
                + " already in force; refused (the list in force stays)");
      }
      boolean sameAsHighest =
          highestEncoded != null
              ? MessageDigest.isEqual(encoded, highestEncoded)
              : MessageDigest.isEqual(sha256(encoded), highestDigest);
      if (order == 0 && !sameAsHighest) {
        throw new KeyExchangeException(
            KeyExchangeException.Reason.CRL_ROLLBACK,
            "revocation list number "
                + number
                + " differs from the list of the same number already in force; refused");
      }
    }
    if (mark != null) {
      // written before the list is put in force: a crash in between keeps the higher floor
      mark.advance(number, sha256(encoded));
    }
    highest = number;
    highestEncoded = encoded;
    crl = candidate;
    loadFailure = null;
  }

  /**
   * Reads the watched file now and puts it in force as {@link #update} does. Thread-safe.
   *
   * @throws KeyExchangeException as {@link #update}, or {@link
   *     KeyExchangeException.Reason#REVOCATION_STATUS_UNKNOWN} if the file cannot be read
   * @throws IllegalStateException for a fixed list
   */
  public synchronized void reload() {
    if (file == null) {
      throw new IllegalStateException("a fixed revocation list has no file to reload");
    }
    loadedVersion = version();
    load();
  }

  /** The CRL number of the list in force, or {@code null} if none is. Thread-safe. */
  public synchronized BigInteger number() {
    return crl == null ? null : crlNumber(crl);
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
    if (file != null) {
      Object version = version();
      if (!version.equals(loadedVersion)) {
        loadedVersion = version;
        try {
          load();
        } catch (KeyExchangeException e) {
          LOG.error("revocation list {} refused: {}", file, e.getMessage());
        }
      }
    }
    if (crl == null) {
      throw new KeyExchangeException(
          KeyExchangeException.Reason.REVOCATION_STATUS_UNKNOWN,
          "revocation list " + (file == null ? "" : file + " ") + "is not usable",
          loadFailure);
    }
    return crl;
  }

  private Object version() {
    try {
      BasicFileAttributes attrs = Files.readAttributes(file, BasicFileAttributes.class);
      return attrs.lastModifiedTime().toMillis() + ":" + attrs.size() + ":" + attrs.fileKey();
    } catch (IOException e) {
      throw unknown("revocation list " + file + " is unreadable");
    }
  }

  /**
   * Reads the file. A list that goes backwards leaves the one in force; an unusable one (bad
   * signature, unparsable) leaves none, so checks fail closed until a good list is published.
   */
  private void load() {
    X509CRL loaded;
    try {
      loaded = Pem.readCrl(file);
      verifyCrl(loaded);
    } catch (KeyExchangeException e) {
      crl = null;
      loadFailure = e;
      throw e;
    }
    BigInteger before = crl == null ? null : crlNumber(crl);
    update(loaded);
    if (!crlNumber(loaded).equals(before)) {
      LOG.info(
          "revocation list {} number {} loaded: {} revoked",
          file,
          crlNumber(loaded),
          loaded.getRevokedCertificates() == null ? 0 : loaded.getRevokedCertificates().size());
    }
  }

  /**
   * The cRLNumber extension (RFC 5280 §5.2.3).
   *
   * @throws KeyExchangeException {@link KeyExchangeException.Reason#REVOCATION_STATUS_UNKNOWN} if
   *     absent or malformed: without it a rollback could not be told from an update
   */
  static BigInteger crlNumber(X509CRL crl) {
    byte[] ext = crl.getExtensionValue(Extension.cRLNumber.getId());
    if (ext == null) {
      throw unknown("the revocation list carries no CRL number");
    }
    try {
      return ASN1Integer.getInstance(ASN1OctetString.getInstance(ext).getOctets()).getValue();
    } catch (IllegalArgumentException e) {
      throw unknown("the revocation list's CRL number is malformed");
    }
  }

  private static byte[] encoded(X509CRL crl) {
    try {
      return crl.getEncoded();
    } catch (CRLException e) {
      throw unknown("the revocation list cannot be encoded");
    }
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
