package io.srdma.channel;

import io.srdma.keys.DeploymentTrust;
import io.srdma.keys.KeyExchangeException;
import java.security.cert.X509Certificate;
import java.time.Duration;
import java.util.function.Consumer;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Re-checks the host's certificate of a live session against the CRL and its dates (run by the
 * control channel's timer every {@link #INTERVAL}): a revoked or expired host certificate ends the
 * session. Timer thread only.
 */
final class HostRecheck {
  private static final Logger LOG = LoggerFactory.getLogger(SecureRdmaClient.class);

  /** How often a live session re-checks the host's certificate against the CRL and its dates. */
  static final Duration INTERVAL = Duration.ofMillis(500);

  /**
   * An unusable CRL (being replaced, or past nextUpdate) ends the session only when it stays so
   * this long: a copy over the file must not end every session.
   */
  static final Duration UNKNOWN_STATUS_GRACE = Duration.ofSeconds(2);

  private final DeploymentTrust trust;
  private final X509Certificate hostCertificate;
  private final SessionState state;
  private final Consumer<ChannelException> end;
  private long revocationUnknownSinceNanos; // 0: status known

  HostRecheck(
      DeploymentTrust trust,
      X509Certificate hostCertificate,
      SessionState state,
      Consumer<ChannelException> end) {
    this.trust = trust;
    this.hostCertificate = hostCertificate;
    this.state = state;
    this.end = end;
  }

  /** One check; ends the session when the host's certificate is revoked or expired. */
  void run() {
    if (!state.isOpen()) {
      return;
    }
    try {
      trust.checkStillValid(hostCertificate);
      revocationUnknownSinceNanos = 0;
    } catch (KeyExchangeException e) {
      if (e.reason() == KeyExchangeException.Reason.REVOCATION_STATUS_UNKNOWN) {
        long now = System.nanoTime();
        if (revocationUnknownSinceNanos == 0) {
          revocationUnknownSinceNanos = now;
          return;
        }
        if (now - revocationUnknownSinceNanos < UNKNOWN_STATUS_GRACE.toNanos()) {
          return;
        }
      }
      LOG.warn(
          "{}: host certificate no longer trusted, session ends: {}", state.name, e.getMessage());
      end.accept(
          new ChannelException(
              ChannelException.Reason.AUTHENTICATION_FAILED,
              e.reason().name(),
              "the host's certificate is no longer trusted: " + e.getMessage(),
              e));
    } catch (RuntimeException e) {
      LOG.debug("{}: host certificate re-check failed: {}", state.name, e.toString());
    }
  }
}
