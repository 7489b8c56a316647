package io.srdma.keys;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.file.Files;
import java.nio.file.Path;
import java.security.cert.X509Certificate;
import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.time.ZoneOffset;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** A certificate never outlives the CA that issues it; the CA is renewed over the same key. */
class CaLifetimeTest {
  @TempDir Path tmp;

  /** A CA in {@code tmp/name} whose certificate ends {@code left} from now. */
  private DeploymentCa caWithLeft(String name, Duration left) {
    Instant made = Instant.now().minus(DeploymentCa.CA_VALIDITY).plus(left);
    DeploymentCa.init(tmp.resolve(name), null, Clock.fixed(made, ZoneOffset.UTC));
    DeploymentCa ca = DeploymentCa.open(tmp.resolve(name), null);
    ca.republishCrl(); // the one of its creation is long past its year
    return ca;
  }

  @Test
  void shouldRefuseACertificateThatWouldOutliveItsCa() throws Exception {
    DeploymentCa ca = caWithLeft("ca", Duration.ofDays(30).plusHours(1));
    Instant caEnd = ca.certificate().getNotAfter().toInstant();
    String issuedBefore = Files.readString(tmp.resolve("ca").resolve(DeploymentCa.ISSUED));
    for (Runnable issue :
        List.<Runnable>of(
            () -> ca.issuePeer(PeerIdentity.of("acme", "a"), Duration.ofDays(90)),
            () -> ca.issueHost("h", Duration.ofDays(31)),
            () -> ca.issueServer("localhost", Duration.ofDays(90)),
            () -> ca.issueServer(List.of("localhost", "::1"), Duration.ofDays(90)))) {
      KeyExchangeException e = assertThrows(KeyExchangeException.class, issue::run);
      assertEquals(KeyExchangeException.Reason.OUTLIVES_CA, e.reason(), e.getMessage());
      assertEquals(KeyExchangeException.Category.INPUT, e.category());
      assertTrue(e.getMessage().contains(caEnd.toString()), e.getMessage());
      assertTrue(e.getMessage().contains("at most 30 days"), e.getMessage());
      assertTrue(e.getMessage().contains("srdma ca renew"), e.getMessage());
    }
    assertEquals(
        issuedBefore,
        Files.readString(tmp.resolve("ca").resolve(DeploymentCa.ISSUED)),
        "nothing recorded for a refused issuance");
    // up to the CA's end is fine
    X509Certificate ok =
        ca.issuePeer(PeerIdentity.of("acme", "a"), Duration.ofDays(30)).certificate();
    assertTrue(!ok.getNotAfter().after(ca.certificate().getNotAfter()));
  }

  @Test
  void shouldRefuseToIssueFromAnExpiredCa() {
    DeploymentCa ca = caWithLeft("old", Duration.ofMinutes(-1));
    KeyExchangeException e =
        assertThrows(
            KeyExchangeException.class,
            () -> ca.issuePeer(PeerIdentity.of("acme", "a"), Duration.ofDays(1)));
    assertEquals(KeyExchangeException.Reason.CA_EXPIRED, e.reason());
  }

  @Test
  void shouldRenewTheCaOverTheSameKeySoIssuedCertificatesStillVerify() throws Exception {
    DeploymentCa ca = caWithLeft("ca", Duration.ofDays(10));
    Path dir = tmp.resolve("ca");
    X509Certificate old = ca.certificate();
    Credential before = ca.issuePeer(PeerIdentity.of("acme", "a"), Duration.ofDays(9));
    byte[] keyBefore = Files.readAllBytes(dir.resolve(DeploymentCa.CA_KEY));

    DeploymentCa renewed = ca.renew(DeploymentCa.CA_VALIDITY);
    X509Certificate now = renewed.certificate();
    assertEquals(now, Pem.readCertificate(dir.resolve(DeploymentCa.CA_CERTIFICATE)));
    assertEquals(old.getSubjectX500Principal(), now.getSubjectX500Principal());
    assertArrayEquals(
        old.getSubjectX500Principal().getEncoded(), now.getSubjectX500Principal().getEncoded());
    assertEquals(old.getPublicKey(), now.getPublicKey());
    assertNotEquals(old.getSerialNumber(), now.getSerialNumber());
    assertEquals(0, now.getBasicConstraints());
    assertTrue(now.getNotAfter().toInstant().isAfter(Instant.now().plus(Duration.ofDays(3600))));
    assertArrayEquals(keyBefore, Files.readAllBytes(dir.resolve(DeploymentCa.CA_KEY)));
    now.verify(now.getPublicKey());

    // a peer holding the renewed ca.crt accepts the certificate issued before the renewal, long
    // after the old CA certificate's end, and one issued after it
    Instant afterOldEnd = old.getNotAfter().toInstant().plus(Duration.ofDays(1));
    Credential after = renewed.issuePeer(PeerIdentity.of("acme", "b"), Duration.ofDays(90));
    DeploymentTrust trust =
        DeploymentCa.open(dir, null).trust().withClock(Clock.fixed(afterOldEnd, ZoneOffset.UTC));
    assertEquals(
        PeerIdentity.of("acme", "b"),
        trust.verify(new X509Certificate[] {after.certificate()}, CertificateUsage.TLS_CLIENT));
    DeploymentTrust beforeEnd = DeploymentCa.open(dir, null).trust();
    assertEquals(
        PeerIdentity.of("acme", "a"),
        beforeEnd.verify(
            new X509Certificate[] {before.certificate()}, CertificateUsage.TLS_CLIENT));
    // and a revocation list signed after the renewal still verifies against the old certificate
    renewed.revoke(before.certificate());
    renewed.crl().verify(old.getPublicKey());
  }

  @Test
  void shouldRenewAnExpiredCa() {
    DeploymentCa ca = caWithLeft("old", Duration.ofDays(-2));
    DeploymentCa renewed = ca.renew(Duration.ofDays(365));
    TrustAnchorValidity.check(renewed.certificate(), Instant.now());
    renewed.issuePeer(PeerIdentity.of("acme", "a"), Duration.ofDays(90));
  }

  @Test
  void shouldRefuseARenewalOutOfRangeAndLeaveCaCrtAlone() throws Exception {
    DeploymentCa ca = DeploymentCa.init(tmp.resolve("ca"), null);
    byte[] before = Files.readAllBytes(tmp.resolve("ca").resolve(DeploymentCa.CA_CERTIFICATE));
    for (Duration d : List.of(Duration.ZERO, Duration.ofDays(3651))) {
      assertEquals(
          KeyExchangeException.Reason.BAD_ARGUMENT,
          assertThrows(KeyExchangeException.class, () -> ca.renew(d)).reason());
    }
    assertArrayEquals(
        before, Files.readAllBytes(tmp.resolve("ca").resolve(DeploymentCa.CA_CERTIFICATE)));
  }

  @Test
  void shouldRefuseToRenewACaCertificateSwappedForAnotherCasSinceItWasOpened() throws Exception {
    DeploymentCa ca = DeploymentCa.init(tmp.resolve("ca"), null);
    DeploymentCa other = DeploymentCa.init(tmp.resolve("other"), null);
    Path crt = tmp.resolve("ca").resolve(DeploymentCa.CA_CERTIFICATE);
    Files.delete(crt);
    Files.copy(tmp.resolve("other").resolve(DeploymentCa.CA_CERTIFICATE), crt);
    KeyExchangeException e =
        assertThrows(KeyExchangeException.class, () -> ca.renew(Duration.ofDays(365)));
    assertEquals(KeyExchangeException.Reason.BAD_PEM, e.reason());
    assertEquals(other.certificate(), Pem.readCertificate(crt), "left as it was");
  }
}
