package io.srdma.keys;

import static org.junit.jupiter.api.Assertions.assertEquals;
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

/** A certificate never outlives the CA that issues it. */
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
}
