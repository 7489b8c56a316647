package io.srdma.keys;

import java.security.cert.X509Certificate;
import java.time.Clock;
import java.time.Instant;
import java.util.Objects;
import java.util.concurrent.atomic.AtomicBoolean;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The validity period of a trust anchor, checked on every connection.
 *
 * <p>PKIX (RFC 5280 §6.1.1) takes a trust anchor as a name and a key only: the JDK's validator
 * never looks at the anchor certificate's own {@code notBefore} / {@code notAfter}, so an expired
 * {@code ca.crt} would keep authenticating peers whose own certificates are still in date. This
 * class closes that gap: {@link #check()} refuses while the clock is outside {@code [notBefore,
 * notAfter]} (both ends inclusive, as RFC 5280 §4.1.2.5 defines validity). The first refusal after
 * an accepted check is logged once at ERROR, naming the CA and the end it is past; later refusals
 * only throw, so that a flood of handshakes does not flood the log.
 *
 * <p>Thread safety: thread-safe. Buffers: none.
 */
public final class TrustAnchorValidity {
  private static final Logger LOG = LoggerFactory.getLogger(TrustAnchorValidity.class);

  private final X509Certificate ca;
  private final Clock clock;
  private final AtomicBoolean refusing = new AtomicBoolean();

  /**
   * Checks {@code ca}'s dates at the time of {@code clock}.
   *
   * @param ca the trust anchor's certificate
   * @param clock the time each check is made at
   */
  public TrustAnchorValidity(X509Certificate ca, Clock clock) {
    this.ca = Objects.requireNonNull(ca, "ca");
    this.clock = Objects.requireNonNull(clock, "clock");
  }

  /** The anchor's certificate. */
  public X509Certificate certificate() {
    return ca;
  }

  /**
   * Refuses unless the anchor is within its validity period now.
   *
   * @throws KeyExchangeException {@link KeyExchangeException.Reason#CA_EXPIRED} or {@link
   *     KeyExchangeException.Reason#CA_NOT_YET_VALID}, naming the CA and its dates
   */
  public void check() {
    check(clock.instant());
  }

  /**
   * As {@link #check()}, at {@code now}.
   *
   * @param now the time of the decision
   */
  public void check(Instant now) {
    try {
      check(ca, now);
    } catch (KeyExchangeException e) {
      if (refusing.compareAndSet(false, true)) {
        LOG.error("refusing every peer: {}", e.getMessage());
      }
      throw e;
    }
    if (refusing.get() && refusing.compareAndSet(true, false)) {
      LOG.info("trust anchor {} is within its validity period again", name(ca));
    }
  }

  /**
   * Refuses unless {@code ca} is within its validity period at {@code now}; logs nothing.
   *
   * @param ca a trust anchor's certificate
   * @param now the time of the decision
   * @throws KeyExchangeException {@link KeyExchangeException.Reason#CA_EXPIRED} or {@link
   *     KeyExchangeException.Reason#CA_NOT_YET_VALID}, naming the CA and its dates
   */
  public static void check(X509Certificate ca, Instant now) {
    Instant notAfter = ca.getNotAfter().toInstant();
    Instant notBefore = ca.getNotBefore().toInstant();
    if (now.isAfter(notAfter)) {
      throw new KeyExchangeException(
          KeyExchangeException.Reason.CA_EXPIRED,
          "the deployment CA "
              + name(ca)
              + " expired at "
              + notAfter
              + " (notAfter); no peer can be authenticated until ca.crt is replaced by a CA"
              + " certificate in date");
    }
    if (now.isBefore(notBefore)) {
      throw new KeyExchangeException(
          KeyExchangeException.Reason.CA_NOT_YET_VALID,
          "the deployment CA "
              + name(ca)
              + " is valid only from "
              + notBefore
              + " (notBefore, notAfter "
              + notAfter
              + "); check this machine's clock");
    }
  }

  /** How soon before a CA's expiry {@link #expiryWarning} speaks up. */
  public static final java.time.Duration EXPIRY_WARNING = java.time.Duration.ofDays(30);

  /**
   * A warning for an operator when {@code ca} expires within {@link #EXPIRY_WARNING} of {@code now}
   * (from then on every handshake is refused), naming the CA, its notAfter and the days left; empty
   * when it expires later, or has expired already ({@link #check} refuses that).
   */
  public static java.util.Optional<String> expiryWarning(X509Certificate ca, Instant now) {
    Instant notAfter = ca.getNotAfter().toInstant();
    if (now.isAfter(notAfter) || now.plus(EXPIRY_WARNING).isBefore(notAfter)) {
      return java.util.Optional.empty();
    }
    long days = java.time.Duration.between(now, notAfter).toDays();
    return java.util.Optional.of(
        "the deployment CA "
            + name(ca)
            + " expires at "
            + notAfter
            + " (in "
            + days
            + (days == 1 ? " day" : " days")
            + "): from then on no peer can be authenticated; renew it before then (srdma ca"
            + " renew: same key, every certificate it issued stays valid) and give the new ca.crt"
            + " to every peer");
  }

  private static String name(X509Certificate ca) {
    return "'"
        + DeploymentTrust.printable(ca.getSubjectX500Principal().getName())
        + "' (serial "
        + ca.getSerialNumber().toString(16)
        + ")";
  }

  /**
   * A trust manager for TLS stacks that are not {@link MutualTls} and trust a CA other than through
   * {@link DeploymentTrust} (the cluster's etcd client): the JDK's PKIX trust manager with this
   * anchor as its only one, refusing while the anchor is outside its validity period. A refusal is
   * a {@link java.security.cert.CertificateException} whose cause is the typed {@link
   * KeyExchangeException}.
   *
   * @return a new trust manager; thread-safe
   */
  public javax.net.ssl.X509ExtendedTrustManager pkixTrustManager() {
    return new AnchorCheckingTrustManager(this);
  }

  @Override
  public String toString() {
    return "TrustAnchorValidity[" + name(ca) + ", notAfter " + ca.getNotAfter().toInstant() + "]";
  }
}
