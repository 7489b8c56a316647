package io.srdma.host;

import io.srdma.keys.DeploymentTrust;
import io.srdma.keys.KeyExchangeException;
import java.security.cert.X509Certificate;
import java.time.Duration;
import java.time.Instant;
import java.util.HashMap;
import java.util.Map;
import java.util.Optional;
import java.util.function.Supplier;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The host's one periodic check of every session, run on its own watchdog thread every {@link
 * #PERIOD} (one for all sessions, apart from the timer so that nothing the timer waits on can stop
 * it): a connection past its handshake deadline, or whose peer stopped reading (a control-frame
 * write blocked longer than the request timeout), is closed; a session whose certificate passed its
 * notAfter, is revoked now (the deployment trust re-reads its CRL when the file changes) or whose
 * age passed the maximum session lifetime is ended by the host, and one idle past the idle timeout
 * is told so and ended ({@link HostSession#endByHost}), its grants revoked. Expiry and lifetime are
 * checked on every tick (they cost a comparison). What can change of a certificate the handshake
 * verified (its dates and its revocation status; {@link DeploymentTrust#checkStillValid}, no
 * signature work, as the client's re-check of the host) is re-checked for each distinct certificate
 * once every {@link #VERIFY_EVERY} ticks, certificates spread over the ticks by hash, so a
 * revocation reaches a live session within {@code VERIFY_EVERY × PERIOD} (600 ms). The path,
 * signature, usage and identity cannot change and are not checked again: the full {@link
 * DeploymentTrust#verify} (an ECDSA verification, about 0.1 ms idle, more when loaded) for every
 * peer's own certificate every 600 ms grows with the sessions: 5 % of the host's CPU samples at 300
 * sessions in the load run's set-up profile, most of a core at 5,000 (docs/performance.md).
 * Confined to the watchdog thread.
 */
final class SessionWatchdog implements Runnable {
  private static final Logger LOG = LoggerFactory.getLogger(SessionWatchdog.class);

  /** Period of the sweep. */
  static final Duration PERIOD = Duration.ofMillis(200);

  /** How long the revocation status may stay unknown before live sessions are ended. */
  static final Duration STATUS_UNKNOWN_GRACE = Duration.ofSeconds(2);

  /** Each certificate's full trust check (path, revocation) runs every this many ticks. */
  static final int VERIFY_EVERY = 3;

  private final HostCounters counters;
  private final DeploymentTrust trust;
  private final Duration maxLifetime;
  private final long writeTimeoutNanos;
  private final long idleTimeoutNanos;
  private final Supplier<Iterable<HostSession>> sessions;
  private long ticks;
  private long statusUnknownSince;

  SessionWatchdog(
      HostCounters counters,
      DeploymentTrust trust,
      Duration maxLifetime,
      Duration writeTimeout,
      Duration idleTimeout,
      Supplier<Iterable<HostSession>> sessions) {
    this.counters = counters;
    this.trust = trust;
    this.maxLifetime = maxLifetime;
    this.writeTimeoutNanos = writeTimeout.toNanos();
    this.idleTimeoutNanos = idleTimeout.toNanos();
    this.sessions = sessions;
  }

  @Override
  public void run() {
    try {
      sweep(System.nanoTime(), Instant.now());
    } catch (RuntimeException e) {
      // a periodic task that throws is never run again: log and keep watching
      LOG.error("session watchdog sweep failed", e);
    }
  }

  void sweep(long nowNanos, Instant now) {
    int phase = (int) (ticks++ % VERIFY_EVERY);
    Map<X509Certificate, Optional<SessionEnd>> verdicts = new HashMap<>();
    for (HostSession s : sessions.get()) {
      if (s.ending() != null) {
        continue;
      }
      long deadline = s.deadlineNanos();
      if (deadline != 0 && nowNanos - deadline > 0) {
        if (s.closeForDeadline()) {
          counters.handshakeDeadlines.increment();
        }
        continue;
      }
      long blocked = s.writeBlockedSince();
      if (blocked != 0 && nowNanos - blocked > writeTimeoutNanos) {
        // the peer stopped reading: the thread writing to it (the session's, or the host's timer
        // telling of an expiry) would wait forever; closing the connection frees it
        if (s.closeForStuckWrite()) {
          LOG.info("closed a session whose peer stopped reading its control connection");
        }
        continue;
      }
      if (s.isEstablished() && nowNanos - s.lastFrameNanos() > idleTimeoutNanos) {
        s.endForIdle(); // its strand tells the peer (TIMEOUT) and ends it
        continue;
      }
      X509Certificate cert = s.certificate();
      if (cert == null) {
        continue;
      }
      SessionEnd why = null;
      if (now.isAfter(cert.getNotAfter().toInstant())) {
        why = SessionEnd.CERTIFICATE_EXPIRED;
      } else if (Math.floorMod(cert.hashCode(), VERIFY_EVERY) == phase) {
        why = verdicts.computeIfAbsent(cert, this::check).orElse(null);
      }
      if (why == null
          && maxLifetime != null
          && s.isEstablished()
          && nowNanos - s.establishedNanos() >= maxLifetime.toNanos()) {
        why = SessionEnd.SESSION_LIFETIME;
      }
      if (why != null) {
        s.endByHost(why);
      }
    }
  }

  /** The deployment trust's verdict on a certificate it accepted at the handshake. */
  private Optional<SessionEnd> check(X509Certificate cert) {
    try {
      trust.checkStillValid(cert);
      statusUnknownSince = 0;
      return Optional.empty();
    } catch (KeyExchangeException e) {
      if (e.reason() != KeyExchangeException.Reason.REVOCATION_STATUS_UNKNOWN) {
        statusUnknownSince = 0;
      }
      return switch (e.reason()) {
        case CERTIFICATE_REVOKED -> Optional.of(SessionEnd.CERTIFICATE_REVOKED);
        case CERTIFICATE_EXPIRED -> Optional.of(SessionEnd.CERTIFICATE_EXPIRED);
        case REVOCATION_STATUS_UNKNOWN -> statusUnknown();
        default -> Optional.of(SessionEnd.CERTIFICATE_REFUSED);
      };
    }
  }

  /**
   * The CRL cannot be used (unreadable, not the CA's, past nextUpdate): new handshakes fail closed
   * at once, live sessions after {@link #STATUS_UNKNOWN_GRACE}, so a CRL file caught half-written
   * (an operator's {@code cp} over it) does not end every session.
   */
  private Optional<SessionEnd> statusUnknown() {
    long now = System.nanoTime();
    if (statusUnknownSince == 0) {
      statusUnknownSince = now == 0 ? 1 : now;
      LOG.warn("revocation status unknown (CRL unusable): live sessions end if it lasts");
    }
    return now - statusUnknownSince >= STATUS_UNKNOWN_GRACE.toNanos()
        ? Optional.of(SessionEnd.CERTIFICATE_REFUSED)
        : Optional.empty();
  }
}
