package io.srdma.keys;

import java.io.IOException;
import java.math.BigInteger;
import java.nio.channels.FileChannel;
import java.nio.channels.FileLock;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermissions;
import java.security.KeyPair;
import java.security.PrivateKey;
import java.security.SecureRandom;
import java.security.cert.X509CRL;
import java.security.cert.X509CRLEntry;
import java.security.cert.X509Certificate;
import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.time.temporal.ChronoUnit;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Objects;
import java.util.TreeMap;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The deployment's certificate authority: one directory holding
 *
 * <ul>
 *   <li>{@value #CA_CERTIFICATE} — the CA certificate, given to every peer;
 *   <li>{@value #CA_KEY} — its private key, owner-only, optionally passphrase-encrypted;
 *   <li>{@value #CRL} — the current revocation list, given to every peer;
 *   <li>{@value #ISSUED} — one line per issued certificate: serial, expiry, subject.
 * </ul>
 *
 * <p>The CA key is ECDSA P-256 (see docs/keys.md for why not Ed25519). Peer certificates carry the
 * identity {@code srdma://<tenant>/<peer>} as a SAN URI; console certificates a DNS name or IPv4
 * address. Issue and revoke hold a file lock on the directory, so concurrent {@code srdma}
 * invocations do not lose each other's updates.
 */
public final class DeploymentCa {
  /** File name of the CA certificate. */
  public static final String CA_CERTIFICATE = "ca.crt";

  /** File name of the CA private key. */
  public static final String CA_KEY = "ca.key";

  /** File name of the revocation list. */
  public static final String CRL = "crl.pem";

  /** File name of the issuance log. */
  public static final String ISSUED = "issued.txt";

  /** Validity of a new CA certificate. */
  public static final Duration CA_VALIDITY = Duration.ofDays(3650);

  /** Validity of each published revocation list; publish again before it ends. */
  public static final Duration CRL_VALIDITY = Duration.ofDays(365);

  /** Start of validity is back-dated by this much, for clock differences between hosts. */
  static final Duration BACKDATE = Duration.ofMinutes(5);

  private static final Logger LOG = LoggerFactory.getLogger(DeploymentCa.class);
  private static final String LOCK = ".lock";

  private final Path dir;
  private final X509Certificate certificate;
  private final PrivateKey key;
  private final CertificateIssuer issuer;
  private final Clock clock;

  private DeploymentCa(Path dir, X509Certificate certificate, PrivateKey key, Clock clock) {
    this.dir = dir;
    this.certificate = certificate;
    this.key = key;
    this.clock = clock;
    this.issuer = new CertificateIssuer(new SecureRandom());
  }

  /**
   * Creates a new CA in {@code dir} (created owner-only if absent).
   *
   * @param passphrase encrypts the CA key if not {@code null} or empty
   * @throws KeyExchangeException {@link KeyExchangeException.Reason#CA_EXISTS} if {@code dir}
   *     already holds a CA key or certificate
   */
  public static DeploymentCa init(Path dir, char[] passphrase) {
    return init(dir, passphrase, Clock.systemUTC());
  }

  static DeploymentCa init(Path dir, char[] passphrase, Clock clock) {
    for (String f : new String[] {CA_CERTIFICATE, CA_KEY, CRL, ISSUED}) {
      if (Files.exists(dir.resolve(f))) {
        throw new KeyExchangeException(
            KeyExchangeException.Reason.CA_EXISTS,
            dir + " already holds a CA (" + f + "); not overwriting it");
      }
    }
    createDirectory(dir);
    CertificateIssuer issuer = new CertificateIssuer(new SecureRandom());
    KeyPair keys = issuer.newKeyPair();
    Instant now = clock.instant().truncatedTo(ChronoUnit.SECONDS);
    String name = "srdma deployment CA " + issuer.newSerial().toString(16).substring(0, 8);
    X509Certificate cert =
        issuer.selfSignedCa(keys, name, now.minus(BACKDATE), now.plus(CA_VALIDITY));
    Pem.writePrivateKey(dir.resolve(CA_KEY), keys.getPrivate(), passphrase);
    Pem.writeCertificate(dir.resolve(CA_CERTIFICATE), cert);
    SecureFiles.writeNew(dir.resolve(ISSUED), new byte[0], false);
    DeploymentCa ca = new DeploymentCa(dir, cert, keys.getPrivate(), clock);
    ca.publishCrl(new TreeMap<>(), BigInteger.valueOf(clock.millis()));
    LOG.info("created deployment CA '{}' in {}", name, dir);
    return ca;
  }

  /**
   * Opens an existing CA.
   *
   * @param passphrase for an encrypted CA key; {@code null} otherwise
   * @throws KeyExchangeException {@link KeyExchangeException.Reason#CA_NOT_FOUND} if {@code dir}
   *     holds no CA
   */
  public static DeploymentCa open(Path dir, char[] passphrase) {
    return open(dir, passphrase, Clock.systemUTC());
  }

  static DeploymentCa open(Path dir, char[] passphrase, Clock clock) {
    for (String f : new String[] {CA_CERTIFICATE, CA_KEY, CRL}) {
      Path p = dir.resolve(f);
      if (Files.exists(p) && !Files.isRegularFile(p)) {
        // a pipe, a device or a directory: never opened, so nothing blocks or reads without end
        throw new KeyExchangeException(
            KeyExchangeException.Reason.IO_ERROR, p + " is not a regular file; not opening the CA");
      }
      if (!Files.isRegularFile(p)) {
        throw new KeyExchangeException(
            KeyExchangeException.Reason.CA_NOT_FOUND,
            "no deployment CA in " + dir + " (" + f + " is missing)");
      }
    }
    X509Certificate cert = Pem.readCertificate(dir.resolve(CA_CERTIFICATE));
    PrivateKey key = Pem.readPrivateKey(dir.resolve(CA_KEY), passphrase);
    if (!keyMatches(cert, key)) {
      // a CA opened with another CA's key signs certificates and revocation lists that no peer
      // accepts: a revoke would report success while every host kept the old list
      throw new KeyExchangeException(
          KeyExchangeException.Reason.BAD_PEM,
          dir.resolve(CA_KEY)
              + " is not the private key of "
              + dir.resolve(CA_CERTIFICATE)
              + "; not opening the CA");
    }
    return new DeploymentCa(dir, cert, key, clock);
  }

  /** Whether {@code key} signs what the certificate's public key verifies. */
  private static boolean keyMatches(X509Certificate cert, PrivateKey key) {
    try {
      byte[] probe = "srdma ca key check".getBytes(StandardCharsets.US_ASCII);
      java.security.Signature s = java.security.Signature.getInstance("SHA256withECDSA");
      s.initSign(key);
      s.update(probe);
      byte[] sig = s.sign();
      java.security.Signature v = java.security.Signature.getInstance("SHA256withECDSA");
      v.initVerify(cert.getPublicKey());
      v.update(probe);
      return v.verify(sig);
    } catch (java.security.GeneralSecurityException | RuntimeException e) {
      return false;
    }
  }

  /**
   * Renews the CA certificate: the same key pair and the same subject, a new serial and a validity
   * from now (back-dated a little) for {@code validity}, so every certificate this CA issued keeps
   * verifying against the renewed {@value #CA_CERTIFICATE} (and certificates issued after the
   * renewal verify against the old one while it lasts: the trust anchor is the name and the key).
   * {@value #CA_CERTIFICATE} is replaced atomically and durably (a temporary file flushed to disk,
   * renamed over it, then the directory flushed) under the directory's lock: a reader, or the
   * directory after a crash, has the old certificate or the new one, never part of one. The key,
   * the revocation list and {@value #ISSUED} are not touched. An expired CA may be renewed: that is
   * the way back for a deployment whose CA ran out. The key was checked to be this certificate's
   * when the CA was opened ({@link #open(Path, char[])}).
   *
   * @param validity how long the renewed CA certificate is valid, 1 to 3,650 days
   * @return the CA with its renewed certificate; this object keeps the old one
   * @throws KeyExchangeException {@link KeyExchangeException.Reason#BAD_ARGUMENT} for a validity
   *     out of range, {@link KeyExchangeException.Reason#IO_ERROR} if ca.crt cannot be replaced
   *     (then it is unchanged), or if it was but its directory could not be flushed to disk
   */
  public synchronized DeploymentCa renew(Duration validity) {
    Objects.requireNonNull(validity, "validity");
    if (validity.compareTo(Duration.ofDays(1)) < 0 || validity.compareTo(CA_VALIDITY) > 0) {
      throw new KeyExchangeException(
          KeyExchangeException.Reason.BAD_ARGUMENT,
          "a CA certificate is renewed for 1 to " + CA_VALIDITY.toDays() + " days");
    }
    try (FileChannel ch = SecureFiles.openLock(dir.resolve(LOCK));
        FileLock lock = ch.lock()) {
      checkLocked(lock);
      X509Certificate onDisk = Pem.readCertificate(dir.resolve(CA_CERTIFICATE));
      if (!onDisk.getPublicKey().equals(certificate.getPublicKey())
          || !onDisk.getSubjectX500Principal().equals(certificate.getSubjectX500Principal())) {
        throw new KeyExchangeException(
            KeyExchangeException.Reason.BAD_PEM,
            dir.resolve(CA_CERTIFICATE)
                + " was replaced by another CA's certificate since the CA was opened; not"
                + " renewing it");
      }
      Instant now = clock.instant().truncatedTo(ChronoUnit.SECONDS);
      X509Certificate renewed =
          issuer.renewedCa(certificate, key, now.minus(BACKDATE), now.plus(validity));
      SecureFiles.replace(
          dir.resolve(CA_CERTIFICATE), Pem.toPem(renewed).getBytes(StandardCharsets.US_ASCII));
      LOG.info(
          "renewed deployment CA certificate in {}: serial {}, valid until {}",
          dir,
          renewed.getSerialNumber().toString(16),
          renewed.getNotAfter().toInstant());
      return new DeploymentCa(dir, renewed, key, clock);
    } catch (IOException e) {
      throw new KeyExchangeException(
          KeyExchangeException.Reason.IO_ERROR, "cannot lock " + dir + ": " + e.getMessage(), e);
    }
  }

  /** The CA's directory. */
  public Path directory() {
    return dir;
  }

  /** The CA certificate. */
  public X509Certificate certificate() {
    return certificate;
  }

  /** Trust in this CA with its revocation list file, re-read when it changes. */
  public DeploymentTrust trust() {
    return DeploymentTrust.of(certificate, RevocationList.watching(dir.resolve(CRL), certificate));
  }

  /**
   * Signs a statement with the CA key (SHA256withECDSA, as the CA signs certificates and CRLs).
   * Used for what the deployment shares outside certificates, e.g. the policy pushed to a cluster.
   * Each caller's statement must begin with its own ASCII domain tag so that a signature over one
   * kind of statement is never valid as another (DER certificates and CRLs begin with 0x30).
   *
   * @param statement the bytes to sign, beginning with a domain tag
   * @return the DER-encoded ECDSA signature
   * @throws IllegalArgumentException if the statement is empty or begins with 0x30
   */
  public byte[] signStatement(byte[] statement) {
    if (statement.length == 0 || statement[0] == 0x30) {
      throw new IllegalArgumentException("a signed statement begins with its own domain tag");
    }
    try {
      java.security.Signature s = java.security.Signature.getInstance("SHA256withECDSA");
      s.initSign(key, new SecureRandom());
      s.update(statement);
      return s.sign();
    } catch (java.security.GeneralSecurityException e) {
      throw new IllegalStateException("the CA key cannot sign", e);
    }
  }

  /** The current revocation list. */
  public X509CRL crl() {
    return Pem.readCrl(dir.resolve(CRL));
  }

  /**
   * Issues a peer certificate valid from now (back-dated a little) for {@code validity}. The
   * profile follows the identity: {@code srdma://host/<name>} gets a host certificate (extended key
   * usage serverAuth only), any other tenant's peer a client certificate (clientAuth only).
   *
   * @throws KeyExchangeException {@link KeyExchangeException.Reason#OUTLIVES_CA} if the certificate
   *     would end after the CA certificate's {@code notAfter} (see {@link
   *     #checkIssuable(Duration)}), {@link KeyExchangeException.Reason#CA_EXPIRED} or {@link
   *     KeyExchangeException.Reason#CA_NOT_YET_VALID} if the CA is outside its own validity now
   */
  public Credential issuePeer(PeerIdentity identity, Duration validity) {
    Instant now = checkIssuable(validity);
    return issuePeer(identity, now.minus(BACKDATE), now.plus(validity));
  }

  /**
   * Refuses a validity that would make a certificate issued now outlive this CA. Peers refuse every
   * certificate once the CA certificate has ended ({@link TrustAnchorValidity}), so such a
   * certificate would stop working at the CA's end, earlier than its own dates say: it is not
   * issued, rather than issued with a date that is not true (ask for fewer days, or renew the CA
   * first, {@link #renew(Duration)}). Nothing is written by this check.
   *
   * @param validity how long the certificate is to be valid from now
   * @return now, as the certificate would be dated (whole seconds)
   * @throws KeyExchangeException {@link KeyExchangeException.Reason#OUTLIVES_CA} naming both ends
   *     and the most days still possible, {@link KeyExchangeException.Reason#CA_EXPIRED} or {@link
   *     KeyExchangeException.Reason#CA_NOT_YET_VALID} if the CA is outside its validity now, {@link
   *     KeyExchangeException.Reason#BAD_ARGUMENT} for a validity that is not positive
   */
  public Instant checkIssuable(Duration validity) {
    Objects.requireNonNull(validity, "validity");
    if (validity.isNegative() || validity.isZero()) {
      throw new KeyExchangeException(
          KeyExchangeException.Reason.BAD_ARGUMENT, "a certificate's validity must be positive");
    }
    Instant now = clock.instant().truncatedTo(ChronoUnit.SECONDS);
    TrustAnchorValidity.check(certificate, now);
    Instant caEnd = certificate.getNotAfter().toInstant();
    Duration left = Duration.between(now, caEnd);
    if (validity.compareTo(left) > 0) {
      long days = left.toDays();
      throw new KeyExchangeException(
          KeyExchangeException.Reason.OUTLIVES_CA,
          "a certificate valid until "
              + now.plus(validity)
              + " would outlive its CA, which ends at "
              + caEnd
              + " (notAfter of "
              + dir.resolve(CA_CERTIFICATE)
              + "); peers refuse every certificate from then on. "
              + (days >= 1
                  ? "Issue it for at most " + days + (days == 1 ? " day" : " days")
                  : "The CA has less than a day left")
              + ", or renew the CA first (srdma ca renew)");
    }
    return now;
  }

  /** Issues a region host certificate for {@code srdma://host/<name>} (serverAuth only). */
  public Credential issueHost(String name, Duration validity) {
    return issuePeer(PeerIdentity.host(name), validity);
  }

  /**
   * Issues a peer certificate valid in {@code [notBefore, notAfter]}, with a fresh P-256 key; the
   * profile follows the identity as for {@link #issuePeer(PeerIdentity, Duration)}. The dates are
   * taken as given, even outside the CA's own validity (tests of the check that peers refuse every
   * certificate once the CA has ended need such certificates); {@code srdma cert issue} and the
   * {@link Duration} forms refuse that ({@link #checkIssuable(Duration)}).
   */
  public Credential issuePeer(PeerIdentity identity, Instant notBefore, Instant notAfter) {
    Objects.requireNonNull(identity, "identity");
    KeyPair keys = issuer.newKeyPair();
    X509Certificate cert =
        issuer.peer(certificate, key, keys.getPublic(), identity, notBefore, notAfter);
    record(cert, identity.toUri());
    return Credential.of(cert, keys.getPrivate());
  }

  /**
   * Issues a console (HTTPS server) certificate for a host name, IPv4 or IPv6 address.
   *
   * @throws KeyExchangeException {@link KeyExchangeException.Reason#BAD_NAME} for a malformed host;
   *     {@link KeyExchangeException.Reason#OUTLIVES_CA} as {@link #checkIssuable(Duration)}
   */
  public Credential issueServer(String host, Duration validity) {
    String h = CertificateIssuer.checkHost(host);
    Instant now = checkIssuable(validity);
    KeyPair keys = issuer.newKeyPair();
    X509Certificate cert =
        issuer.server(
            certificate, key, keys.getPublic(), h, now.minus(BACKDATE), now.plus(validity));
    record(cert, "host:" + h);
    return Credential.of(cert, keys.getPrivate());
  }

  /**
   * Issues a console (HTTPS server) certificate valid for several names, e.g. {@code localhost},
   * {@code 127.0.0.1} and {@code ::1}: one subject alternative name per distinct host, a dNSName
   * for a DNS name and an iPAddress for an IPv4 or IPv6 address (each as {@link #checkHost(String)}
   * reads it), the first host as CN.
   *
   * @throws KeyExchangeException {@link KeyExchangeException.Reason#BAD_NAME} for no host or a
   *     malformed one; {@link KeyExchangeException.Reason#OUTLIVES_CA} as {@link
   *     #checkIssuable(Duration)}
   */
  public Credential issueServer(List<String> hosts, Duration validity) {
    List<String> checked = checkedHosts(hosts);
    Instant now = checkIssuable(validity);
    return issueServer(checked, now.minus(BACKDATE), now.plus(validity));
  }

  /**
   * Issues a console (HTTPS server) certificate for several names, as {@link #issueServer(List,
   * Duration)}, valid in {@code [notBefore, notAfter]} taken as given, even outside the CA's own
   * validity (as {@link #issuePeer(PeerIdentity, Instant, Instant)}).
   *
   * @throws KeyExchangeException {@link KeyExchangeException.Reason#BAD_NAME} for no host or a
   *     malformed one
   */
  public Credential issueServer(List<String> hosts, Instant notBefore, Instant notAfter) {
    List<String> checked = checkedHosts(hosts);
    KeyPair keys = issuer.newKeyPair();
    X509Certificate cert =
        issuer.server(certificate, key, keys.getPublic(), checked, notBefore, notAfter);
    record(cert, "host:" + String.join(",", checked));
    return Credential.of(cert, keys.getPrivate());
  }

  private static List<String> checkedHosts(List<String> hosts) {
    if (hosts.isEmpty()) {
      throw new KeyExchangeException(
          KeyExchangeException.Reason.BAD_NAME, "a server certificate needs at least one host");
    }
    return hosts.stream().map(CertificateIssuer::checkHost).distinct().toList();
  }

  /**
   * Revokes a certificate this CA issued and publishes a new revocation list.
   *
   * @return {@code false} if it was already revoked
   * @throws KeyExchangeException {@link KeyExchangeException.Reason#UNKNOWN_SERIAL} if this CA
   *     never issued {@code serial}
   */
  public synchronized boolean revoke(BigInteger serial) {
    try (FileChannel ch = SecureFiles.openLock(dir.resolve(LOCK));
        FileLock lock = ch.lock()) {
      checkLocked(lock);
      if (!isIssued(serial)) {
        throw new KeyExchangeException(
            KeyExchangeException.Reason.UNKNOWN_SERIAL,
            "this CA never issued serial " + serial.toString(16));
      }
      X509CRL current = crl();
      Map<BigInteger, Instant> revoked = new TreeMap<>();
      if (current.getRevokedCertificates() != null) {
        for (X509CRLEntry e : current.getRevokedCertificates()) {
          revoked.put(e.getSerialNumber(), e.getRevocationDate().toInstant());
        }
      }
      if (revoked.containsKey(serial)) {
        return false;
      }
      revoked.put(serial, clock.instant().truncatedTo(ChronoUnit.SECONDS));
      publishCrl(revoked, nextCrlNumber(current));
      LOG.info("revoked certificate serial {}", serial.toString(16));
      return true;
    } catch (IOException e) {
      throw new KeyExchangeException(
          KeyExchangeException.Reason.IO_ERROR, "cannot lock " + dir + ": " + e.getMessage(), e);
    }
  }

  /**
   * Revokes a certificate this CA issued.
   *
   * @throws KeyExchangeException {@link KeyExchangeException.Reason#UNTRUSTED_ISSUER} if another CA
   *     issued it
   */
  public boolean revoke(X509Certificate cert) {
    try {
      cert.verify(certificate.getPublicKey());
    } catch (java.security.GeneralSecurityException e) {
      throw new KeyExchangeException(
          KeyExchangeException.Reason.UNTRUSTED_ISSUER,
          "certificate serial "
              + cert.getSerialNumber().toString(16)
              + " was not issued by this CA");
    }
    return revoke(cert.getSerialNumber());
  }

  /** Publishes the revocation list again with a fresh validity (run well before it expires). */
  public synchronized void republishCrl() {
    X509CRL current = crl();
    Map<BigInteger, Instant> revoked = new TreeMap<>();
    if (current.getRevokedCertificates() != null) {
      for (X509CRLEntry e : current.getRevokedCertificates()) {
        revoked.put(e.getSerialNumber(), e.getRevocationDate().toInstant());
      }
    }
    publishCrl(revoked, nextCrlNumber(current));
  }

  /** Whether this CA's log records {@code serial}. */
  public boolean isIssued(BigInteger serial) {
    String prefix = serial.toString(16) + "\t";
    for (String line : readIssued().split("\n", -1)) {
      if (line.startsWith(prefix)) {
        return true;
      }
    }
    return false;
  }

  private String readIssued() {
    return new String(
        SecureFiles.read(dir.resolve(ISSUED), MAX_ISSUED_BYTES, BoundedFileOpen.Links.REFUSE, null),
        StandardCharsets.UTF_8);
  }

  /**
   * Largest {@value #ISSUED} read: 64 MiB, some 800,000 issuances; a larger file, a pipe or a
   * device is refused rather than read without end.
   */
  static final int MAX_ISSUED_BYTES = 64 << 20;

  private synchronized void record(X509Certificate cert, String subject) {
    String line =
        cert.getSerialNumber().toString(16)
            + "\t"
            + cert.getNotAfter().toInstant()
            + "\t"
            + subject
            + "\n";
    try (FileChannel ch = SecureFiles.openLock(dir.resolve(LOCK));
        FileLock lock = ch.lock()) {
      checkLocked(lock);
      // refused unless a regular file (not a link) that stays the one checked: appending to a pipe
      // would block, to a device would write nowhere, through a link into another file
      SecureFiles.appendDurably(dir.resolve(ISSUED), line.getBytes(StandardCharsets.UTF_8));
    } catch (IOException e) {
      throw new KeyExchangeException(
          KeyExchangeException.Reason.IO_ERROR, "cannot record issuance in " + dir, e);
    }
  }

  private static void checkLocked(FileLock lock) {
    if (!lock.isValid()) {
      throw new KeyExchangeException(
          KeyExchangeException.Reason.IO_ERROR, "lost the lock on the CA directory");
    }
  }

  private void publishCrl(Map<BigInteger, Instant> revoked, BigInteger number) {
    Instant now = clock.instant().truncatedTo(ChronoUnit.SECONDS);
    X509CRL crl = issuer.crl(certificate, key, revoked, number, now, now.plus(CRL_VALIDITY));
    byte[] pem = Pem.toPem(crl).getBytes(StandardCharsets.US_ASCII);
    if (Files.exists(dir.resolve(CRL))) {
      SecureFiles.replace(dir.resolve(CRL), pem);
    } else {
      SecureFiles.writeNew(dir.resolve(CRL), pem, false);
    }
  }

  /**
   * The number of the next list: above the current one and at least the time in milliseconds, so
   * numbers only grow (peers refuse a list that goes backwards, RevocationList) even if an older
   * crl.pem was put back in this directory.
   */
  private BigInteger nextCrlNumber(X509CRL current) {
    BigInteger next = RevocationList.crlNumber(current).add(BigInteger.ONE);
    return next.max(BigInteger.valueOf(clock.millis()));
  }

  private static void createDirectory(Path dir) {
    try {
      if (!Files.isDirectory(dir)) {
        if (dir.getFileSystem().supportedFileAttributeViews().contains("posix")) {
          Files.createDirectories(
              dir,
              PosixFilePermissions.asFileAttribute(PosixFilePermissions.fromString("rwx------")));
        } else {
          Files.createDirectories(dir);
        }
      }
    } catch (IOException e) {
      throw new KeyExchangeException(
          KeyExchangeException.Reason.IO_ERROR, "cannot create " + dir + ": " + e.getMessage(), e);
    }
  }

  /**
   * Checks and normalises a console host: a DNS name (labels of a-z, 0-9, '-', lower-cased), an
   * IPv4 address (dotted decimal, no leading zeros) or an IPv6 address (optionally in brackets;
   * returned in the RFC 5952 form, e.g. {@code ::1}). Never resolves anything. Thread-safe.
   *
   * @throws KeyExchangeException {@link KeyExchangeException.Reason#BAD_NAME} if malformed
   */
  public static String checkHost(String host) {
    return CertificateIssuer.checkHost(host);
  }

  /**
   * Checks and normalises a DNS name for a console certificate, refusing IP addresses. Thread-safe.
   *
   * @throws KeyExchangeException {@link KeyExchangeException.Reason#BAD_NAME} if malformed or an
   *     address
   */
  public static String checkDnsName(String name) {
    return CertificateIssuer.checkDnsName(name);
  }

  /**
   * Checks and normalises an IPv4 or IPv6 address for a console certificate, refusing DNS names.
   * Thread-safe.
   *
   * @throws KeyExchangeException {@link KeyExchangeException.Reason#BAD_NAME} if malformed or a
   *     name
   */
  public static String checkIpAddress(String address) {
    return CertificateIssuer.checkIpAddress(address);
  }

  /**
   * Whether a host as {@link #checkHost(String)} returned it is an IP address (it goes into an
   * iPAddress subject alternative name) rather than a DNS name. Thread-safe.
   */
  public static boolean isIpAddress(String checkedHost) {
    return CertificateIssuer.isIpAddress(checkedHost);
  }

  /** Parses a serial number written in hex, with optional {@code 0x} prefix and colons. */
  public static BigInteger parseSerial(String text) {
    String t = text.trim().toLowerCase(Locale.ROOT).replace(":", "");
    if (t.startsWith("0x")) {
      t = t.substring(2);
    }
    if (t.isEmpty() || t.length() > 40 || !t.matches("[0-9a-f]+")) {
      throw new KeyExchangeException(
          KeyExchangeException.Reason.UNKNOWN_SERIAL,
          "serial must be hexadecimal (got " + PeerIdentity.printable(text) + ")");
    }
    return new BigInteger(t, 16);
  }

  @Override
  public String toString() {
    return "DeploymentCa[" + dir + ", " + certificate.getSubjectX500Principal().getName() + "]";
  }
}
