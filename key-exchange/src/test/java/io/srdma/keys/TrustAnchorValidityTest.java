package io.srdma.keys;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.file.Path;
import java.security.cert.X509Certificate;
import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.time.ZoneId;
import java.time.ZoneOffset;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicReference;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

/**
 * An expired (or not yet valid) deployment CA authenticates nobody: PKIX ignores the trust anchor's
 * own dates, so {@link DeploymentTrust} checks them on every connection, and on every live session.
 * The peers' own certificates here are in date and outlive the CA, as {@code srdma cert issue
 * --days 90} gives when the CA has less than 90 days left; the CRL is republished and in date.
 */
@Timeout(value = 60, unit = TimeUnit.SECONDS)
class TrustAnchorValidityTest {
  private static final Duration TIMEOUT = Duration.ofSeconds(10);
  @TempDir Path tmp;

  /** A clock the test moves, as time passes under a long-running host. */
  private static final class MovableClock extends Clock {
    private final AtomicReference<Instant> now;

    MovableClock(Instant start) {
      now = new AtomicReference<>(start);
    }

    void set(Instant t) {
      now.set(t);
    }

    @Override
    public Instant instant() {
      return now.get();
    }

    @Override
    public ZoneId getZone() {
      return ZoneOffset.UTC;
    }

    @Override
    public Clock withZone(ZoneId zone) {
      return this;
    }
  }

  /** A CA whose own certificate was created at {@code createdAt}, with a CRL published now. */
  private DeploymentCa caCreatedAt(String name, Instant createdAt) {
    Path dir = tmp.resolve(name);
    DeploymentCa.init(dir, null, Clock.fixed(createdAt, ZoneOffset.UTC));
    DeploymentCa ca = DeploymentCa.open(dir, null);
    ca.republishCrl();
    return ca;
  }

  /** A CA that expires about an hour from now. */
  private DeploymentCa caExpiringSoon() {
    return caCreatedAt(
        "ageing", Instant.now().minus(DeploymentCa.CA_VALIDITY).plus(Duration.ofHours(1)));
  }

  /** A certificate in date now and for a day, longer than the CA that issued it. */
  private static Credential peer(DeploymentCa ca, PeerIdentity id) {
    Instant now = Instant.now();
    return ca.issuePeer(id, now.minusSeconds(60), now.plus(Duration.ofDays(1)));
  }

  private static DeploymentTrust at(DeploymentCa ca, Instant t) {
    return ca.trust().withClock(Clock.fixed(t, ZoneOffset.UTC));
  }

  private static KeyExchangeException refusal(DeploymentTrust trust, X509Certificate cert) {
    return assertThrows(
        KeyExchangeException.class,
        () -> trust.verify(new X509Certificate[] {cert}, CertificateUsage.TLS_CLIENT));
  }

  @Test
  void shouldRefuseEveryPeerOnceTheCaHasExpired() {
    DeploymentCa ca = caExpiringSoon();
    X509Certificate client = peer(ca, PeerIdentity.of("acme", "a")).certificate();
    Instant notAfter = ca.certificate().getNotAfter().toInstant();
    // validity is inclusive of notAfter (RFC 5280 §4.1.2.5): the last accepted instant
    assertEquals(PeerIdentity.of("acme", "a"), verify(at(ca, notAfter), client));
    KeyExchangeException e = refusal(at(ca, notAfter.plusMillis(1)), client);
    assertEquals(KeyExchangeException.Reason.CA_EXPIRED, e.reason());
    assertEquals(KeyExchangeException.Category.PEER_CERTIFICATE, e.category());
    assertTrue(e.getMessage().contains(notAfter.toString()), e.getMessage());
    assertTrue(
        e.getMessage().contains(ca.certificate().getSubjectX500Principal().getName()),
        e.getMessage());
  }

  @Test
  void shouldRefuseEveryPeerWhileTheCaIsNotYetValid() {
    // a CA made on a machine whose clock ran a day ahead
    DeploymentCa ca = caCreatedAt("early", Instant.now().plus(Duration.ofDays(1)));
    X509Certificate client = peer(ca, PeerIdentity.of("acme", "a")).certificate();
    Instant notBefore = ca.certificate().getNotBefore().toInstant();
    assertEquals(
        KeyExchangeException.Reason.CA_NOT_YET_VALID, refusal(ca.trust(), client).reason());
    assertEquals(
        KeyExchangeException.Reason.CA_NOT_YET_VALID,
        refusal(at(ca, notBefore.minusMillis(1)), client).reason());
    assertEquals(PeerIdentity.of("acme", "a"), verify(at(ca, notBefore), client));
  }

  @Test
  void shouldEndALiveSessionWhenTheCaExpires() {
    DeploymentCa ca = caExpiringSoon();
    X509Certificate client = peer(ca, PeerIdentity.of("acme", "a")).certificate();
    Instant notAfter = ca.certificate().getNotAfter().toInstant();
    at(ca, notAfter).checkStillValid(client);
    assertEquals(
        KeyExchangeException.Reason.CA_EXPIRED,
        assertThrows(
                KeyExchangeException.class,
                () -> at(ca, notAfter.plusSeconds(1)).checkStillValid(client))
            .reason());
  }

  @Test
  void shouldRefuseTheNextHandshakeOfALongRunningHostOnceItsCaExpires() throws Exception {
    DeploymentCa ca = caExpiringSoon();
    Instant notAfter = ca.certificate().getNotAfter().toInstant();
    MovableClock hostClock = new MovableClock(Instant.now());
    MutualTls host =
        MutualTls.server(peer(ca, PeerIdentity.host("h")), ca.trust().withClock(hostClock));
    MutualTls client = MutualTls.client(peer(ca, PeerIdentity.of("acme", "a")), ca.trust());
    try (TestTlsServer server = new TestTlsServer(host, p -> {})) {
      client.connect(server.address(), TIMEOUT).socket().close();
      assertInstanceOf(AuthenticatedPeer.class, server.nextOutcome());

      hostClock.set(notAfter.plusSeconds(1)); // the same host, an hour later
      try {
        client.connect(server.address(), TIMEOUT).socket().close();
      } catch (KeyExchangeException expected) {
        // in TLS 1.3 the client may finish before the server judges its certificate
      }
      KeyExchangeException e = assertInstanceOf(KeyExchangeException.class, server.nextOutcome());
      assertEquals(KeyExchangeException.Reason.CA_EXPIRED, e.reason());
    }
  }

  @Test
  void shouldHaveTheClientRefuseAHostOnceItsCaExpires() throws Exception {
    DeploymentCa ca = caExpiringSoon();
    Instant later = ca.certificate().getNotAfter().toInstant().plusSeconds(1);
    MutualTls host = MutualTls.server(peer(ca, PeerIdentity.host("h")), ca.trust());
    MutualTls client =
        MutualTls.client(
            peer(ca, PeerIdentity.of("acme", "a")),
            ca.trust().withClock(Clock.fixed(later, ZoneOffset.UTC)),
            PeerIdentity.host("h"));
    try (TestTlsServer server = new TestTlsServer(host, p -> {})) {
      KeyExchangeException e =
          assertThrows(KeyExchangeException.class, () -> client.connect(server.address(), TIMEOUT));
      assertEquals(KeyExchangeException.Reason.CA_EXPIRED, e.reason());
    }
  }

  @Test
  void shouldRefuseInThePkixTrustManagerTheExpiredAnchorTheJdkAccepts() throws Exception {
    // a CA that really expired a minute ago, and a server certificate of its, in date, from before
    DeploymentCa ca =
        caCreatedAt(
            "expired", Instant.now().minus(DeploymentCa.CA_VALIDITY).minus(Duration.ofMinutes(1)));
    X509Certificate[] chain = {
      // dated explicitly: issuing for a duration refuses a certificate that outlives its CA
      ca.issueServer(List.of("localhost"), ageOf(ca), ageOf(ca).plus(Duration.ofDays(2)))
          .certificate()
    };
    // the gap: the JDK's own PKIX trust manager, anchored at that CA, accepts the chain
    javax.net.ssl.TrustManagerFactory jdk = javax.net.ssl.TrustManagerFactory.getInstance("PKIX");
    java.security.KeyStore anchors = java.security.KeyStore.getInstance("PKCS12");
    anchors.load(null, null);
    anchors.setCertificateEntry("ca", ca.certificate());
    jdk.init(anchors);
    ((javax.net.ssl.X509TrustManager) jdk.getTrustManagers()[0])
        .checkServerTrusted(chain, "UNKNOWN");

    javax.net.ssl.X509ExtendedTrustManager checked =
        new TrustAnchorValidity(ca.certificate(), Clock.systemUTC()).pkixTrustManager();
    java.security.cert.CertificateException e =
        assertThrows(
            java.security.cert.CertificateException.class,
            () -> checked.checkServerTrusted(chain, "UNKNOWN"));
    assertEquals(
        KeyExchangeException.Reason.CA_EXPIRED,
        assertInstanceOf(KeyExchangeException.class, e.getCause()).reason());
  }

  /** A day before {@code ca} expired: when it still issued certificates. */
  private static Instant ageOf(DeploymentCa ca) {
    return ca.certificate().getNotAfter().toInstant().minus(Duration.ofDays(1));
  }

  private static PeerIdentity verify(DeploymentTrust trust, X509Certificate cert) {
    return trust.verify(new X509Certificate[] {cert}, CertificateUsage.TLS_CLIENT);
  }

  @Test
  void anOperatorIsWarnedInTheLast30DaysOfTheCa(@TempDir Path caDir) {
    DeploymentCa ca = DeploymentCa.init(caDir, null);
    X509Certificate cert = ca.certificate();
    Instant notAfter = cert.getNotAfter().toInstant();
    Optional<String> soon =
        TrustAnchorValidity.expiryWarning(cert, notAfter.minus(Duration.ofDays(10)));
    assertTrue(soon.isPresent());
    assertTrue(soon.get().contains("in 10 days"), soon.get());
    assertTrue(soon.get().contains(notAfter.toString()), soon.get());
    assertTrue(
        TrustAnchorValidity.expiryWarning(cert, notAfter.minus(Duration.ofDays(31))).isEmpty(),
        "a CA with more than 30 days left is not worth a warning");
    assertTrue(
        TrustAnchorValidity.expiryWarning(cert, notAfter.plusSeconds(1)).isEmpty(),
        "an expired CA is refused, not warned about");
  }
}
