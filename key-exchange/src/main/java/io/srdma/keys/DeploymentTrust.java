package io.srdma.keys;

import java.nio.file.Path;
import java.security.GeneralSecurityException;
import java.security.cert.CertPathValidator;
import java.security.cert.CertPathValidatorException;
import java.security.cert.CertPathValidatorException.BasicReason;
import java.security.cert.CertificateFactory;
import java.security.cert.CertificateParsingException;
import java.security.cert.PKIXParameters;
import java.security.cert.PKIXReason;
import java.security.cert.TrustAnchor;
import java.security.cert.X509Certificate;
import java.time.Clock;
import java.time.Instant;
import java.util.Date;
import java.util.List;
import java.util.Objects;
import java.util.Set;

/**
 * What a deployment trusts: its own CA, and nothing else, with that CA's revocation list.
 *
 * <p>{@link #verify} is the single place where a peer's certificate is accepted or refused; the TLS
 * trust managers of {@link MutualTls} call it. Path validation is the JDK's PKIX validator with the
 * deployment CA as the only trust anchor; the CA certificate's own validity period (which PKIX
 * ignores, {@link TrustAnchorValidity}), revocation, usage and identity are checked on top of it,
 * at the time of the trust's clock, on every call.
 *
 * <p>Thread safety: thread-safe; one trust may serve many clients, hosts and threads (its
 * revocation list reloads under its own lock). Buffers: none.
 */
public final class DeploymentTrust {
  private final X509Certificate ca;
  private final RevocationList revocations;
  private final Clock clock;
  private final TrustAnchorValidity anchor;

  private DeploymentTrust(X509Certificate ca, RevocationList revocations, Clock clock) {
    this.ca = Objects.requireNonNull(ca, "ca");
    this.revocations = Objects.requireNonNull(revocations, "revocations");
    this.clock = Objects.requireNonNull(clock, "clock");
    this.anchor = new TrustAnchorValidity(ca, clock);
  }

  /** Trust in {@code ca}, with its revocation list. */
  public static DeploymentTrust of(X509Certificate ca, RevocationList revocations) {
    return new DeploymentTrust(ca, revocations, Clock.systemUTC());
  }

  /**
   * Trust read from the files a peer receives from the deployment: the CA certificate and the CRL,
   * re-read when it changes.
   */
  public static DeploymentTrust load(Path caCertificateFile, Path crlFile) {
    X509Certificate ca = Pem.readCertificate(caCertificateFile);
    return of(ca, RevocationList.watching(crlFile, ca));
  }

  /**
   * As {@link #load(Path, Path)}, with the highest CRL number accepted kept in {@code
   * crlNumberFile} across restarts ({@link RevocationList#watching(Path, X509Certificate, Path)}).
   */
  public static DeploymentTrust load(Path caCertificateFile, Path crlFile, Path crlNumberFile) {
    X509Certificate ca = Pem.readCertificate(caCertificateFile);
    return of(ca, RevocationList.watching(crlFile, ca, crlNumberFile));
  }

  /** The same trust, judged at the time of {@code clock} (tests, replays). */
  public DeploymentTrust withClock(Clock clock) {
    return new DeploymentTrust(ca, revocations, clock);
  }

  /** The deployment CA's certificate. */
  public X509Certificate caCertificate() {
    return ca;
  }

  /**
   * Accepts or refuses a peer's certificate chain; only the first certificate (the peer's own) is
   * used, a CA certificate sent along is ignored.
   *
   * @param chain the chain the peer presented, peer certificate first
   * @param usage the TLS role the peer plays: {@link CertificateUsage#TLS_SERVER} needs a host
   *     identity ({@code srdma://host/<name>}) and serverAuth, {@link CertificateUsage#TLS_CLIENT}
   *     a tenant identity and clientAuth
   * @return the peer's identity, from its certificate
   * @throws KeyExchangeException of category {@link KeyExchangeException.Category#PEER_CERTIFICATE}
   *     whose reason says why the certificate was refused; {@link
   *     KeyExchangeException.Reason#CA_EXPIRED} or {@link
   *     KeyExchangeException.Reason#CA_NOT_YET_VALID} while the CA certificate itself is outside
   *     its validity period
   */
  public PeerIdentity verify(X509Certificate[] chain, CertificateUsage usage) {
    if (chain == null || chain.length == 0 || chain[0] == null) {
      throw new KeyExchangeException(
          KeyExchangeException.Reason.NO_CERTIFICATE, "the peer presented no certificate");
    }
    X509Certificate leaf = chain[0];
    // one instant for every date of this decision: the anchor, the path and the CRL
    Instant now = clock.instant();
    anchor.check(now);
    validatePath(leaf, Date.from(now));
    revocations.check(leaf, now);
    checkUsage(leaf, usage);
    PeerIdentity identity = PeerIdentity.fromCertificate(leaf);
    checkRole(identity, usage);
    return identity;
  }

  /**
   * Re-checks, for a live session, what can change after a certificate was verified: its validity
   * period, the CA certificate's validity period, and its revocation status (the CRL is re-read
   * when its file changed). The chain, usage and identity were checked by {@link #verify} when the
   * session began and cannot change. Cheap (no signature check): callers may run it every second
   * per session. Thread-safe.
   *
   * @param certificate a certificate {@link #verify} accepted
   * @throws KeyExchangeException {@code CERTIFICATE_EXPIRED}, {@code CERTIFICATE_NOT_YET_VALID},
   *     {@code CA_EXPIRED}, {@code CA_NOT_YET_VALID}, {@code CERTIFICATE_REVOKED} or {@code
   *     REVOCATION_STATUS_UNKNOWN}
   */
  public void checkStillValid(X509Certificate certificate) {
    Objects.requireNonNull(certificate, "certificate");
    Instant now = clock.instant();
    String serial = " (serial " + certificate.getSerialNumber().toString(16) + ")";
    if (now.isAfter(certificate.getNotAfter().toInstant())) {
      throw new KeyExchangeException(
          KeyExchangeException.Reason.CERTIFICATE_EXPIRED,
          "certificate expired at " + certificate.getNotAfter().toInstant() + serial);
    }
    if (now.isBefore(certificate.getNotBefore().toInstant())) {
      throw new KeyExchangeException(
          KeyExchangeException.Reason.CERTIFICATE_NOT_YET_VALID,
          "certificate is valid from " + certificate.getNotBefore().toInstant() + serial);
    }
    anchor.check(now);
    revocations.check(certificate, now);
  }

  /**
   * One role per identity: only {@code srdma://host/*} may act as TLS server, and it may not act as
   * TLS client. Certificates issued before the profiles were split carry both extended key usages;
   * this check keeps them in their role too.
   */
  private static void checkRole(PeerIdentity identity, CertificateUsage usage) {
    if (usage == CertificateUsage.TLS_SERVER && !identity.isHost()) {
      throw wrongUsage(identity + " is a tenant peer's certificate: it cannot act as a host");
    }
    if (usage == CertificateUsage.TLS_CLIENT && identity.isHost()) {
      throw wrongUsage(identity + " is a host's certificate: it cannot act as a tenant peer");
    }
  }

  private void validatePath(X509Certificate leaf, Date now) {
    try {
      PKIXParameters params = new PKIXParameters(Set.of(new TrustAnchor(ca, null)));
      params.setRevocationEnabled(false); // checked by RevocationList, which fails closed
      params.setDate(now);
      CertificateFactory cf = CertificateFactory.getInstance("X.509");
      CertPathValidator.getInstance("PKIX").validate(cf.generateCertPath(List.of(leaf)), params);
    } catch (CertPathValidatorException e) {
      throw refused(e, leaf);
    } catch (GeneralSecurityException e) {
      throw Pem.internal("PKIX validation unavailable", e);
    }
  }

  private static KeyExchangeException refused(CertPathValidatorException e, X509Certificate leaf) {
    String serial = " (serial " + leaf.getSerialNumber().toString(16) + ")";
    CertPathValidatorException.Reason r = e.getReason();
    if (r == BasicReason.EXPIRED) {
      return new KeyExchangeException(
          KeyExchangeException.Reason.CERTIFICATE_EXPIRED,
          "certificate expired at " + leaf.getNotAfter().toInstant() + serial);
    }
    if (r == BasicReason.NOT_YET_VALID) {
      return new KeyExchangeException(
          KeyExchangeException.Reason.CERTIFICATE_NOT_YET_VALID,
          "certificate is valid from " + leaf.getNotBefore().toInstant() + serial);
    }
    if (r == PKIXReason.NO_TRUST_ANCHOR || r == BasicReason.INVALID_SIGNATURE) {
      return new KeyExchangeException(
          KeyExchangeException.Reason.UNTRUSTED_ISSUER,
          "certificate was not issued by the deployment CA (issuer "
              + printable(leaf.getIssuerX500Principal().getName())
              + ")");
    }
    if (r == PKIXReason.INVALID_KEY_USAGE) {
      return new KeyExchangeException(
          KeyExchangeException.Reason.WRONG_USAGE, "key usage does not allow this use" + serial);
    }
    return new KeyExchangeException(
        KeyExchangeException.Reason.CERTIFICATE_INVALID,
        "certificate refused by path validation (" + r + ")" + serial,
        e);
  }

  /** The longest peer-chosen name put into a message. */
  static final int NAME_LIMIT = 256;

  /**
   * A name the peer chose (an issuer's DN, which the JDK prints with CR, LF and ESC as they are),
   * fit for a message that applications log: printable ASCII kept, every other char as a Java
   * unicode escape (backslash, u, four hex digits), cut at {@value #NAME_LIMIT} chars.
   */
  static String printable(String name) {
    StringBuilder b = new StringBuilder(Math.min(name.length(), NAME_LIMIT) + 8);
    for (int i = 0; i < name.length(); i++) {
      if (b.length() >= NAME_LIMIT) {
        return b.append("...").toString();
      }
      char c = name.charAt(i);
      if (c >= 0x20 && c < 0x7f) {
        b.append(c);
      } else {
        b.append(String.format("\\u%04x", (int) c));
      }
    }
    return b.toString();
  }

  private static void checkUsage(X509Certificate leaf, CertificateUsage usage) {
    if (leaf.getBasicConstraints() >= 0) {
      throw wrongUsage("a CA certificate cannot identify a peer");
    }
    boolean[] keyUsage = leaf.getKeyUsage();
    if (keyUsage == null || !keyUsage[0]) {
      throw wrongUsage("key usage lacks digitalSignature");
    }
    List<String> eku;
    try {
      eku = leaf.getExtendedKeyUsage();
    } catch (CertificateParsingException e) {
      throw wrongUsage("extended key usage is malformed");
    }
    if (eku == null || !eku.contains(usage.extendedKeyUsageOid())) {
      throw wrongUsage(
          "extended key usage does not allow "
              + (usage == CertificateUsage.TLS_CLIENT ? "clientAuth" : "serverAuth"));
    }
  }

  private static KeyExchangeException wrongUsage(String why) {
    return new KeyExchangeException(KeyExchangeException.Reason.WRONG_USAGE, why);
  }

  @Override
  public String toString() {
    return "DeploymentTrust[ca=" + ca.getSubjectX500Principal().getName() + "]";
  }

  /**
   * This trust as a JSSE trust manager, for TLS stacks other than {@link MutualTls} (e.g. Netty on
   * BoringSSL): the same CA-only validation, revocation, usage and identity checks. A trust manager
   * runs only in full handshakes: such a stack must turn session resumption off itself (or verify
   * the peer again after each handshake), as {@link MutualTls} does; it pins no host.
   */
  public javax.net.ssl.X509ExtendedTrustManager trustManager() {
    return new DeploymentTrustManager(this);
  }
}
